// The private QMP client against a real QEMU (`-M none`: no guest, starts
// in ~20 ms) and, for the one case QEMU cannot produce (a command that
// never answers), against a stand-in QMP server.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { QmpClient } from '../src/qemu/qmp-client.js';

const code = (c: string) => (e: Error & { code?: string }) => e.code === c;

describe('QmpClient with a real QEMU', () => {
  let dir = '';
  let qemu: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-qmp-'));
    qemu = spawn(
      'qemu-system-x86_64',
      [
        '-M',
        'none',
        '-S',
        '-nodefaults',
        '-display',
        'none',
        '-qmp',
        `unix:${join(dir, 'qmp.sock')},server=on,wait=off`,
      ],
      { stdio: 'ignore' },
    );
    exited = new Promise((r) => qemu?.once('exit', r));
  });
  after(async () => {
    qemu?.kill('SIGKILL');
    await exited;
    await rm(dir, { recursive: true, force: true });
  });

  it('connects, runs commands, reports error replies and events, and notices the close', async () => {
    const qmp = await QmpClient.connect(join(dir, 'qmp.sock'), { timeoutMs: 5000 });
    assert.deepEqual(await qmp.execute('query-status'), {
      status: 'prelaunch',
      singlestep: false,
      running: false,
    });
    await assert.rejects(
      qmp.execute('no-such-command'),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_QMP_ERROR' && /CommandNotFound/.test(e.message),
    );
    const resumed = qmp.waitForEvent('RESUME', () => true, 5000);
    const [, event] = await Promise.all([qmp.execute('cont'), resumed]);
    assert.equal(event.event, 'RESUME');
    const never = qmp.waitForEvent('MIGRATION', () => true, 5000);
    await qmp.execute('quit').catch(() => undefined);
    await assert.rejects(never, code('VMM_QMP_ERROR'));
    await exited;
    assert.equal(qmp.closed, true);
    await assert.rejects(qmp.execute('query-status'), code('VMM_QMP_ERROR'));
  });

  it('gives up on a socket that never appears: by the abort reason, or by timeout', async () => {
    await assert.rejects(
      QmpClient.connect(join(dir, 'missing.sock'), { abortIf: () => 'exited (status 1): boom' }),
      (e: Error & { code?: string }) => e.code === 'VMM_START_FAILED' && /boom/.test(e.message),
    );
    await assert.rejects(
      QmpClient.connect(join(dir, 'missing.sock'), { timeoutMs: 50 }),
      code('VMM_TIMEOUT'),
    );
  });
});

describe('QmpClient with a stand-in server that stops answering', () => {
  let dir = '';
  let server: Server | undefined;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-qmp-'));
    server = createServer((sock) => {
      sock.write('{"QMP": {"version": {}, "capabilities": []}}\r\n');
      sock.once('data', () => sock.write('{"return": {}, "id": 1}\r\n'));
    });
    await new Promise<void>((r) => server?.listen(join(dir, 'qmp.sock'), r));
  });
  after(async () => {
    await new Promise((r) => server?.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('times a command out with VMM_TIMEOUT', async () => {
    const qmp = await QmpClient.connect(join(dir, 'qmp.sock'));
    await assert.rejects(qmp.execute('query-status', undefined, 100), code('VMM_TIMEOUT'));
    qmp.close();
  });
});
