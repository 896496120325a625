// The SDK against a node with real microVMs (QEMU): commands, files, PTY,
// the console, pause/resume with memory, the proxy by host name, kill; and
// fork and snapshots.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { release } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AenvClient,
  CommandExitError,
  FileNotFoundError,
  InvalidStateError,
  SandboxNotFoundError,
} from '@aenv/sdk';
import { startVmNode, type VmNode } from './helpers/vm-node.js';

let t: VmNode;
let client: AenvClient;

before(async () => {
  t = await startVmNode('10.249.0.0/24');
  client = new AenvClient({ apiUrl: t.node.url, apiKey: t.node.apiKey, env: {} });
});

after(async () => {
  await t?.close();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await sleep(100);
  assert.ok(check(), `timed out waiting for ${what}`);
}

describe('SDK against a node (real microVMs)', { timeout: 900_000 }, () => {
  it('runs commands, moves files and drives a PTY in a microVM', async () => {
    await using sbx = await client.sandboxes.create('base', { timeoutMs: 600_000 });
    const uname = await sbx.commands.run('uname -r');
    assert.notEqual(uname.stdout.trim(), release(), 'the guest runs its own kernel');
    await assert.rejects(
      sbx.commands.run('exit 9'),
      (e: unknown) => e instanceof CommandExitError && e.exitCode === 9,
    );
    const bytes = new Uint8Array(1 << 20).map((_, i) => (i * 31) % 256);
    await sbx.files.write('/home/user/blob.bin', bytes);
    assert.deepEqual(await sbx.files.readBytes('/home/user/blob.bin'), bytes);
    assert.ok(
      (await sbx.files.list('/home/user')).some(
        (e) => e.name === 'blob.bin' && e.size === bytes.length,
      ),
    );
    await assert.rejects(sbx.files.read('/home/user/none'), FileNotFoundError);
    let screen = '';
    const pty = await sbx.pty.create({
      cols: 90,
      rows: 20,
      onData: (b) => (screen += Buffer.from(b).toString()),
    });
    await sbx.pty.sendInput(pty.pid, 'stty size; echo vm-$((6*7))\n');
    await until(() => screen.includes('vm-42') && screen.includes('20 90'), 'PTY output');
    await sbx.pty.kill(pty.pid);
    await sbx.commands.run('echo aenv-console-marker > /dev/console', { user: 'root' });
    let logs = '';
    for (let i = 0; i < 50 && !logs.includes('aenv-console-marker'); i++) {
      logs = await sbx.logs({ lines: 50 });
      await sleep(100);
    }
    assert.match(logs, /aenv-console-marker/, 'the guest console reaches aenv logs');
    const host = sbx.getHost(49983);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${t.node.url}/health`, { headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.once('error', reject);
      req.end();
    });
    assert.equal(status, 204, "the guest's envd answers through the host name");
  });

  it('pauses and resumes with memory: a running process survives', async () => {
    const sbx = await client.sandboxes.create('base', { timeoutMs: 600_000 });
    try {
      await sbx.files.write('/home/user/kept.txt', 'on disk');
      const bg = await sbx.commands.run('sleep 4242', { background: true, timeoutMs: 0 });
      await sbx.pause();
      assert.equal((await sbx.getInfo()).state, 'paused');
      assert.equal(await sbx.isRunning(), false);
      await assert.rejects(sbx.pause(), InvalidStateError);
      await sbx.resume();
      assert.equal(await sbx.files.read('/home/user/kept.txt'), 'on disk');
      const ps = await sbx.commands.run(`kill -0 ${bg.pid} && echo alive`);
      assert.equal(ps.stdout, 'alive\n', 'the process in memory came back');
    } finally {
      await sbx.kill();
    }
    await assert.rejects(client.sandboxes.get(sbx.sandboxId), SandboxNotFoundError);
  });

  it('forks and snapshots', async () => {
    const sbx = await client.sandboxes.create('base', { timeoutMs: 600_000 });
    try {
      await sbx.files.write('/home/user/mark', 'parent');
      const children = await sbx.fork(4);
      assert.equal(children.length, 4);
      await Promise.all(
        children.map(async (c) => {
          assert.equal(await c.files.read('/home/user/mark'), 'parent');
          await c.kill();
        }),
      );
      const snap = await sbx.snapshot();
      const child = await client.sandboxes.create(snap.snapshotId);
      assert.equal(await child.files.read('/home/user/mark'), 'parent');
      await child.kill();
      await client.snapshots.delete(snap.snapshotId);
    } finally {
      await sbx.kill();
    }
  });
});
