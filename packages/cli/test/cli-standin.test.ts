// The `aenv` command against a real node whose machines are stand-ins
// running the real envd on this host (helpers/envd-standin-launcher.ts):
// every command the node supports, real processes for exit statuses and
// piped stdin, a real terminal (tmux) for `connect`. The microVM version of
// the acceptance flow is cli.vm.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { quoteWord } from '../src/terminal/shell-quote.js';
import { standInUnavailable } from './helpers/envd-standin-launcher.js';
import { nodeHasRoute } from './helpers/node-routes.js';
import { AENV_MAIN, runAenv, spawnAenv } from './helpers/run-aenv.js';
import { startStandInNode, type StandInNode } from './helpers/standin-node.js';

const skip = standInUnavailable();
let t: StandInNode;

before(async () => {
  if (skip !== undefined) return;
  t = await startStandInNode();
});

after(async () => {
  await t?.close();
});

const aenv = (argv: string[], options?: Parameters<typeof runAenv>[2]) =>
  runAenv(argv, t.env, options);

async function startDetached(): Promise<{ id: string; root: string }> {
  const started = await aenv(['start', '--detach', '--timeout', '10m']);
  assert.equal(started.code, 0, started.stderr);
  const id = started.stdout.trim();
  const pwd = await aenv(['exec', id, '--', 'pwd']);
  return { id, root: pwd.stdout.trim() };
}

describe('aenv against a node (stand-in machines, real envd)', { skip, timeout: 180_000 }, () => {
  it('starts detached and lists: a table on a terminal, JSON on a pipe, ids with -q', async () => {
    const { id } = await startDetached();
    assert.match(id, /^[a-z0-9]{20}$/);
    const table = await aenv(['ls'], { tty: true });
    assert.equal(table.code, 0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    assert.match(header ?? '', /^SANDBOX ID\s+TEMPLATE\s+STATE\s+CPUS\s+MEMORY\s+STARTED\s+ENDS$/);
    assert.ok(
      rows.some((r) => r.startsWith(id) && /\bbase\b.*\brunning\b.*\bin (9|10)m\b/.test(r)),
      table.stdout,
    );
    const json = JSON.parse((await aenv(['ls'])).stdout) as { sandboxId: string; state: string }[];
    assert.ok(json.some((s) => s.sandboxId === id && s.state === 'running'));
    assert.ok((await aenv(['ls', '-q', '--state', 'running'])).stdout.split('\n').includes(id));
    assert.equal((await aenv(['ls', '-q', '--state', 'paused'])).stdout, '');
    const inspect = JSON.parse((await aenv(['inspect', id])).stdout) as { sandboxId: string };
    assert.equal(inspect.sandboxId, id);
    assert.equal((await aenv(['rm', id])).stdout, `${id}\n`);
  });

  it('exec streams output, passes words and stdin, and exits with the command status', async () => {
    const { id, root } = await startDetached();
    const failing = await spawnAenv(['exec', id, '--', 'echo out; echo err >&2; exit 3'], t.env);
    assert.equal(failing.code, 3);
    assert.equal(failing.stdout, 'out\n');
    assert.equal(failing.stderr, 'err\n');
    const words = await spawnAenv(
      ['exec', id, '--', 'printf', '%s|', 'a b', "it's", '$HOME'],
      t.env,
    );
    assert.equal(words.stdout, "a b|it's|$HOME|");
    const piped = await spawnAenv(['exec', '-i', id, '--', 'tr', 'a-z', 'A-Z'], t.env, {
      input: 'shout\n',
    });
    assert.equal(piped.stdout, 'SHOUT\n');
    const opts = await aenv(['exec', '-e', 'A=1', '-w', root, id, '--', 'echo $A $(pwd)']);
    assert.equal(opts.stdout, `1 ${root}\n`);
    const killed = await spawnAenv(['exec', id, '--', 'kill -9 $$'], t.env);
    assert.equal(killed.code, 137, 'a signal gives 128 + its number');
    const timedOut = await spawnAenv(['exec', '--timeout', '1s', id, '--', 'sleep 30'], t.env);
    assert.notEqual(timedOut.code, 0);
    await aenv(['rm', id]);
  });

  it('copies files and directory trees both ways, and - for stdin and stdout', async () => {
    const { id, root } = await startDetached();
    const local = join(t.home, 'cp');
    mkdirSync(join(local, 'tree', 'sub'), { recursive: true });
    writeFileSync(join(local, 'tree', 'a.txt'), 'A');
    writeFileSync(join(local, 'tree', 'sub', 'b.bin'), Buffer.alloc(200_000, 7));
    const up = await aenv(['cp', join(local, 'tree'), `${id}:${root}/`]);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stderr, /copied 2 files/);
    const listing = await aenv([
      'exec',
      id,
      '--',
      `cd ${root}/tree && find . -type f | sort && wc -c < sub/b.bin`,
    ]);
    assert.equal(listing.stdout, './a.txt\n./sub/b.bin\n200000\n');
    const down = await aenv(['cp', `${id}:${root}/tree`, join(local, 'back')]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(readFileSync(join(local, 'back', 'a.txt'), 'utf8'), 'A');
    assert.equal(statSync(join(local, 'back', 'sub', 'b.bin')).size, 200_000);
    const fromStdin = await spawnAenv(['cp', '-', `${id}:${root}/stdin.txt`], t.env, {
      input: 'from stdin',
    });
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    const toStdout = await spawnAenv(['cp', `${id}:${root}/stdin.txt`, '-'], t.env);
    assert.equal(toStdout.stdout, 'from stdin');
    const missing = await aenv(['cp', `${id}:${root}/nope`, local]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /does not exist.*ENVD_PATH_NOT_FOUND/);
    const bad = await aenv(['cp', 'a', 'b']);
    assert.equal(bad.code, 2);
    await aenv(['rm', id]);
  });

  it('shows the console with logs', async () => {
    const { id } = await startDetached();
    const logs = await aenv(['logs', '-n', '50', id]);
    assert.equal(logs.code, 0);
    assert.match(logs.stdout, /envd listening/);
    assert.equal((await aenv(['logs', '-n', '0', id])).code, 2);
    await aenv(['rm', id]);
  });

  it('pauses and resumes keeping files, and removes', async () => {
    const { id, root } = await startDetached();
    await aenv(['exec', id, '--', `echo kept > ${root}/kept.txt`]);
    assert.equal((await aenv(['pause', id])).stdout, `${id}\n`);
    assert.deepEqual((await aenv(['ls', '-q', '--state', 'paused'])).stdout.trim().split('\n'), [
      id,
    ]);
    const again = await aenv(['pause', id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /SBX_INVALID_STATE/);
    assert.match(again.stderr, /'aenv ls' shows/);
    assert.equal((await aenv(['resume', id])).code, 0);
    assert.equal((await aenv(['exec', id, '--', `cat ${root}/kept.txt`])).stdout, 'kept\n');
    assert.equal((await aenv(['rm', id])).code, 0);
    assert.ok(!(await aenv(['ls', '-q'])).stdout.includes(id));
    const gone = await aenv(['rm', id, 'another0000000000000']);
    assert.equal(gone.code, 1);
    assert.equal((gone.stderr.match(/SBX_NOT_FOUND/g) ?? []).length, 2, 'every id is tried');
  });

  it('start attaches a shell (here on a pipe) and removes the sandbox when it exits', async () => {
    const before = (await aenv(['ls', '-q'])).stdout;
    const run = await spawnAenv(['start'], t.env, { input: 'echo inside-$((1+1))\nexit 4\n' });
    assert.equal(run.code, 4, run.stderr);
    assert.match(run.stdout, /inside-2/);
    assert.match(run.stderr, /sandbox [a-z0-9]{20} removed/);
    assert.equal((await aenv(['ls', '-q'])).stdout, before);
  });

  it('connect drives a shell in a real terminal (tmux), following resizes', async () => {
    const { id } = await startDetached();
    const socket = `aenv-cli-test-${process.pid}`;
    const tmux = (...args: string[]): string =>
      execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    const screen = (): string => tmux('capture-pane', '-p', '-t', 'cli');
    const until = async (what: RegExp): Promise<void> => {
      for (let i = 0; i < 200 && !what.test(screen()); i++) await sleep(50);
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
        'cli',
        '-x',
        '120',
        '-y',
        '30',
        `env -i ${env} ${process.execPath} ${AENV_MAIN} connect ${id}; echo "status=$?"; sleep 60`,
      );
      tmux('send-keys', '-t', 'cli', 'echo typed-$((6*7))', 'Enter');
      await until(/^typed-42$/m);
      tmux('send-keys', '-t', 'cli', 'stty size', 'Enter');
      await until(/^30 120$/m);
      tmux('resize-window', '-t', 'cli', '-x', '100', '-y', '40');
      await sleep(300);
      tmux('send-keys', '-t', 'cli', 'clear; stty size', 'Enter');
      await until(/^40 100$/m);
      tmux('send-keys', '-t', 'cli', 'exit 5', 'Enter');
      await until(/^status=5$/m);
    } finally {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    }
    await aenv(['rm', id]);
  });

  it('explains failures: unknown sandbox, wrong key, unreachable node, bad usage', async () => {
    const unknown = await aenv(['exec', 'zzzzzzzzzzzzzzzzzzzz', '--', 'true']);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^aenv exec: sandbox zzzzzzzzzzzzzzzzzzzz not found \(SBX_NOT_FOUND\)\n {2}'aenv ls' lists/,
    );
    const wrongKey = await aenv(['ls', '--key', 'e2b_00']);
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /API_UNAUTHENTICATED\)\n {2}Give .* its API key/);
    const down = await aenv(['ls', '--url', 'http://127.0.0.1:9']);
    assert.equal(down.code, 1);
    assert.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:9 .*\n {2}Is the node running\?/);
    const usage = await aenv(['exec', 'abc']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /expected a command.*\nRun 'aenv exec --help'/);
    const unknownOption = await aenv(['ls', '--bogus']);
    assert.equal(unknownOption.code, 2);
    assert.match(unknownOption.stderr, /Unknown option '--bogus'/);
  });

  it('says clearly what this node does not support yet', async (ctx) => {
    const { id } = await startDetached();
    const dockerfile = join(t.home, 'Dockerfile');
    writeFileSync(dockerfile, 'FROM alpine\n');
    const cases: [string[], string, RegExp][] = [
      [['pull', 'alpine:3'], 'POST /templates/pull', /pulling images/],
      [['build', '-f', dockerfile], 'POST /templates/build', /template builds/],
      [['fork', id, '-n', '4'], 'POST /sandboxes/{id}/fork', /fork/],
      [['snapshot', 'create', id], 'POST /sandboxes/{id}/snapshots', /snapshots/],
      [['snapshot', 'ls'], 'GET /snapshots', /snapshots/],
      [['snapshot', 'rm', 'x'], 'DELETE /snapshots/{id}', /snapshots/],
      [['template', 'ls'], 'GET /templates', /listing templates/],
      [['template', 'rm', 'x'], 'DELETE /templates/{id}', /deleting templates/],
      [['nodes'], 'GET /nodes', /listing nodes/],
    ];
    let checked = 0;
    for (const [argv, route, what] of cases) {
      if (await nodeHasRoute(t.node.url, route)) continue;
      const r = await aenv(argv);
      assert.equal(r.code, 1, argv.join(' '));
      assert.match(r.stderr, /does not support .* yet/, argv.join(' '));
      assert.match(r.stderr, what, argv.join(' '));
      assert.match(
        r.stderr,
        /API_ROUTE_NOT_FOUND\)\n {2}.* runs an aenv version without this feature/,
        argv.join(' '),
      );
      checked++;
    }
    if (checked < cases.length)
      ctx.diagnostic(`${cases.length - checked} of these routes exist now`);
    await aenv(['rm', id]);
  });

  it('forks into 4 and snapshots, when the node has the routes', async (ctx) => {
    const fork = await nodeHasRoute(t.node.url, 'POST /sandboxes/{id}/fork');
    const snapshot = await nodeHasRoute(t.node.url, 'POST /sandboxes/{id}/snapshots');
    if (!fork && !snapshot) {
      ctx.skip('this node has no fork or snapshot route yet (issue #9)');
      return;
    }
    const { id, root } = await startDetached();
    await aenv(['exec', id, '--', `echo parent > ${root}/mark`]);
    const made: string[] = [];
    if (fork) {
      const forked = await aenv(['fork', id, '-n', '4']);
      assert.equal(forked.code, 0, forked.stderr);
      const children = forked.stdout.trim().split('\n');
      assert.equal(children.length, 4);
      made.push(...children);
      for (const child of children) {
        const pwd = (await aenv(['exec', child, '--', 'pwd'])).stdout.trim();
        assert.equal((await aenv(['exec', child, '--', `cat ${pwd}/mark`])).stdout, 'parent\n');
      }
    }
    if (snapshot) {
      const snap = await aenv(['snapshot', 'create', id, '--name', 'cli-test']);
      assert.equal(snap.code, 0, snap.stderr);
      const snapId = snap.stdout.trim();
      assert.ok((await aenv(['snapshot', 'ls', '-q'])).stdout.split('\n').includes(snapId));
      const fromSnap = await aenv(['start', '--detach', snapId]);
      assert.equal(fromSnap.code, 0, fromSnap.stderr);
      const child = fromSnap.stdout.trim();
      made.push(child);
      const pwd = (await aenv(['exec', child, '--', 'pwd'])).stdout.trim();
      assert.equal((await aenv(['exec', child, '--', `cat ${pwd}/mark`])).stdout, 'parent\n');
      await aenv(['rm', ...made]);
      made.length = 0;
      assert.equal((await aenv(['snapshot', 'rm', snapId])).code, 0);
      const gone = await aenv(['template', 'rm', snapId]);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /not found\n {2}'aenv template ls' lists/);
    }
    await aenv(['rm', id, ...made]);
  });

  it('auth login checks and stores the node and key, status shows them, logout forgets', async () => {
    const env = { ...t.env, AENV_API_URL: '', AENV_API_KEY: '' };
    const bad = await runAenv(['auth', 'login', '--url', t.node.url, '--key', 'e2b_00'], env);
    assert.equal(bad.code, 1, 'a wrong key is not stored');
    const login = await runAenv(['auth', 'login', '--url', t.node.url, '--key-stdin'], env, {
      input: `${t.node.apiKey}\n`,
    });
    assert.equal(login.code, 0, login.stderr);
    const path = t.env.AENV_CLI_CONFIG ?? '';
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), {
      url: t.node.url,
      key: t.node.apiKey,
    });
    const status = await runAenv(['auth', 'status'], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`node: +${t.node.url} \\(from aenv auth\\)`));
    assert.match(status.stdout, /key: +e2b_[0-9a-f]{4}…[0-9a-f]{4} \(from aenv auth\)/);
    assert.ok(!status.stdout.includes(t.node.apiKey), 'the key is not printed');
    assert.equal(
      (await runAenv(['ls', '-q'], env)).code,
      0,
      'other commands use the stored settings',
    );
    assert.equal((await runAenv(['auth', 'logout'], env)).code, 0);
    assert.equal((await runAenv(['auth', 'logout'], env)).code, 1);
    writeFileSync(path, '{}');
  });
});
