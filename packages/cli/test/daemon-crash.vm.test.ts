// `aenv server` killed with kill -9 while one sandbox runs and another is
// paused: after a restart on the same home, the paused one resumes with its
// files and memory state, the one that was running is gone (its machine died
// with the daemon), and nothing of either run is left on the host.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Sandbox } from 'e2b';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'aenv-crash-'));
const prefix = `c${Math.floor(Math.random() * 1e6)}`;
const children: ChildProcess[] = [];

after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

function lines(cmd: string, args: string[]): string[] {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l !== '');
  } catch {
    return [];
  }
}

/** No QEMU, netns, link, nft table, sandbox dir or NBD socket of this home is left. */
function assertNothingLeft(): void {
  assert.deepEqual(
    lines('pgrep', ['-af', 'qemu-system']).filter((l) => l.includes(home)),
    [],
  );
  assert.deepEqual(
    lines('ip', ['netns', 'list']).filter((l) => l.startsWith(prefix)),
    [],
  );
  assert.deepEqual(
    lines('ip', ['-o', 'link', 'show']).filter((l) => l.includes(` ${prefix}`)),
    [],
  );
  assert.deepEqual(
    lines('nft', ['list', 'tables']).filter((l) => l.includes(prefix)),
    [],
  );
  for (const sub of ['sandboxes', 'nbd']) {
    let names: string[] = [];
    try {
      names = readdirSync(join(home, sub));
    } catch {
      names = [];
    }
    assert.deepEqual(names, [], `${sub} left behind`);
  }
}

/** Starts `aenv server` and resolves with its URL once it is ready. */
function startDaemon(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [MAIN, 'server', '--home', home, '--port', '0'], {
    env: {
      ...process.env,
      AENV_ARTIFACTS_DIR: process.env.AENV_TEST_CACHE ?? '/var/tmp/aenv-test-cache',
      AENV_NETWORK_PREFIX: prefix,
      AENV_NETWORK_ADDRESS_POOL: '10.253.0.0/24',
      AENV_NETWORK_POOL_LOW: '1',
      AENV_NETWORK_POOL_HIGH: '2',
      AENV_NETWORK_LOCK_DIR: join(home, 'lock'),
      AENV_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const m = /aenv node ready at (\S+)/.exec(line);
      if (m !== null) resolve({ child, url: m[1] as string });
    });
    child.once('exit', (code) => reject(new Error(`aenv server exited with ${String(code)}`)));
  });
}

describe('aenv server killed with kill -9 (real microVMs)', { timeout: 600_000 }, () => {
  it('brings paused sandboxes back with their data and leaks nothing', async () => {
    const first = await startDaemon();
    const apiKey = readFileSync(join(home, 'api-key'), 'utf8').trim();
    const opts = { apiKey, apiUrl: first.url, sandboxUrl: first.url };
    const running = await Sandbox.create('base', opts);
    const paused = await Sandbox.create('base', opts);
    await running.files.write('/home/user/f', 'running');
    await paused.files.write('/home/user/f', 'paused');
    await paused.commands.run('echo $RANDOM > /tmp/in-memory');
    const inMemory = await paused.files.read('/tmp/in-memory');
    assert.equal(await paused.pause(), true);

    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await startDaemon();
    const opts2 = { apiKey, apiUrl: second.url, sandboxUrl: second.url };
    try {
      const info = await Sandbox.getInfo(paused.sandboxId, opts2);
      assert.equal(info.state, 'paused');
      const back = await Sandbox.connect(paused.sandboxId, opts2);
      assert.equal(await back.files.read('/home/user/f'), 'paused');
      assert.equal(
        await back.files.read('/tmp/in-memory'),
        inMemory,
        'memory state (tmpfs) survived',
      );
      await assert.rejects(Sandbox.getInfo(running.sandboxId, opts2), /not found/i);
      await back.kill();
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
    assertNothingLeft();
  });
});
