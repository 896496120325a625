// The acceptance flow of `aenv` against a node with real microVMs (QEMU):
// start detached, exec with a non-zero status, connect in a real terminal
// (tmux) typing a command and reading its output, cp both ways, pause and
// resume, logs, fork 4, snapshot, rm (pull and build: pull.vm.test.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { quoteWord } from '../src/terminal/shell-quote.js';
import { AENV_MAIN, spawnAenv } from './helpers/run-aenv.js';
import { startVmNode, type VmNode } from './helpers/vm-node.js';

let t: VmNode;

before(async () => {
  t = await startVmNode('10.248.0.0/24');
});

after(async () => {
  await t?.close();
});

const aenv = (argv: string[], input?: string) =>
  spawnAenv(argv, t.env, input === undefined ? {} : { input });

describe('aenv against a node (real microVMs)', { timeout: 900_000 }, () => {
  let id = '';

  it('starts a sandbox detached', async () => {
    const started = await aenv(['start', '--detach', '--timeout', '20m']);
    assert.equal(started.code, 0, started.stderr);
    id = started.stdout.trim();
    assert.match(id, /^[a-z0-9]{20}$/);
    assert.ok((await aenv(['ls', '-q'])).stdout.split('\n').includes(id));
  });

  it('exec propagates the exit status and streams both outputs', async () => {
    const r = await aenv(['exec', id, '--', 'echo to-out; echo to-err >&2; exit 42']);
    assert.equal(r.code, 42);
    assert.equal(r.stdout, 'to-out\n');
    assert.equal(r.stderr, 'to-err\n');
    assert.equal((await aenv(['exec', id, '--', 'true'])).code, 0);
  });

  it('connect gives a shell in a real terminal: type a command, read its output', async () => {
    const socket = `aenv-cli-vm-${process.pid}`;
    const tmux = (...args: string[]): string =>
      execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    const screen = (): string => tmux('capture-pane', '-p', '-t', 'vm');
    const until = async (what: RegExp): Promise<void> => {
      for (let i = 0; i < 600 && !what.test(screen()); i++) await sleep(100);
      assert.match(screen(), what);
    };
    const env = Object.entries(t.env)
      .map(([k, v]) => `${k}=${quoteWord(v)}`)
      .join(' ');
    try {
      tmux(
        'new-session',
        '-d',
        '-s',
        'vm',
        '-x',
        '120',
        '-y',
        '30',
        `env -i ${env} ${process.execPath} ${AENV_MAIN} connect ${id}; echo "status=$?"; sleep 60`,
      );
      tmux('send-keys', '-t', 'vm', 'echo "$(whoami)-$((6*7))-$(uname -s)"', 'Enter');
      await until(/^user-42-Linux$/m);
      tmux('send-keys', '-t', 'vm', 'stty size', 'Enter');
      await until(/^30 120$/m);
      tmux('send-keys', '-t', 'vm', 'exit 3', 'Enter');
      await until(/^status=3$/m);
    } finally {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    }
  });

  it('cp copies a tree into the sandbox and back', async () => {
    const local = join(t.home, 'tree');
    mkdirSync(join(local, 'sub'), { recursive: true });
    writeFileSync(join(local, 'a.txt'), 'alpha\n');
    writeFileSync(join(local, 'sub', 'b.txt'), 'beta\n');
    const up = await aenv(['cp', local, `${id}:/home/user/`]);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(
      (await aenv(['exec', id, '--', 'cat /home/user/tree/sub/b.txt'])).stdout,
      'beta\n',
    );
    await aenv(['exec', id, '--', 'echo made-inside > /home/user/tree/inside.txt']);
    const down = await aenv(['cp', `${id}:/home/user/tree`, join(t.home, 'back')]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(readFileSync(join(t.home, 'back', 'inside.txt'), 'utf8'), 'made-inside\n');
    assert.equal(readFileSync(join(t.home, 'back', 'a.txt'), 'utf8'), 'alpha\n');
  });

  it('pause and resume keep memory and disk; logs show the console', async () => {
    await aenv(['exec', id, '--', 'setsid nohup sleep 4343 >/dev/null 2>&1 </dev/null &']);
    assert.equal((await aenv(['pause', id])).code, 0);
    assert.ok((await aenv(['ls', '-q', '--state', 'paused'])).stdout.split('\n').includes(id));
    assert.equal((await aenv(['resume', id])).code, 0);
    const alive = await aenv([
      'exec',
      id,
      '--',
      'pgrep -f "sleep 4343" >/dev/null && cat /home/user/tree/a.txt',
    ]);
    assert.equal(alive.stdout, 'alpha\n', alive.stderr);
    await aenv(['exec', '-u', 'root', id, '--', 'echo cli-console-marker > /dev/console']);
    let logs = '';
    for (let i = 0; i < 50 && !logs.includes('cli-console-marker'); i++) {
      logs = (await aenv(['logs', id])).stdout;
      await sleep(100);
    }
    assert.match(logs, /cli-console-marker/);
  });

  it('forks into 4 and snapshots', async () => {
    const forked = await aenv(['fork', id, '-n', '4']);
    assert.equal(forked.code, 0, forked.stderr);
    const children = forked.stdout.trim().split('\n');
    assert.equal(children.length, 4);
    for (const child of children) {
      assert.equal(
        (await aenv(['exec', child, '--', 'cat /home/user/tree/a.txt'])).stdout,
        'alpha\n',
      );
    }
    assert.equal((await aenv(['rm', ...children])).code, 0);
    const snap = await aenv(['snapshot', 'create', id]);
    assert.equal(snap.code, 0, snap.stderr);
    const fromSnap = await aenv(['start', '--detach', snap.stdout.trim()]);
    assert.equal(fromSnap.code, 0, fromSnap.stderr);
    const child = fromSnap.stdout.trim();
    assert.equal(
      (await aenv(['exec', child, '--', 'cat /home/user/tree/a.txt'])).stdout,
      'alpha\n',
    );
    assert.equal((await aenv(['rm', child])).code, 0);
    assert.equal((await aenv(['snapshot', 'rm', snap.stdout.trim()])).code, 0);
  });

  it('rm removes the sandbox', async () => {
    assert.equal((await aenv(['rm', id])).stdout, `${id}\n`);
    assert.ok(!(await aenv(['ls', '-q'])).stdout.includes(id));
  });
});
