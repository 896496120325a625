/**
 * envd driven by the real e2b SDK (debug mode, direct to envd): commands in
 * the foreground and background, environment, working directory, users,
 * stdin, kill, list, timeouts.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CommandExitError,
  InvalidArgumentError,
  NotFoundError,
  TimeoutError,
  type Sandbox,
} from 'e2b';
import {
  EXTRA_GID,
  IS_ROOT,
  USER_GID,
  USER_UID,
  processAlive,
  startFixture,
  waitFor,
  type EnvdFixture,
} from './helpers/envd-fixture.js';

describe('commands through the e2b SDK', () => {
  let fx: EnvdFixture;
  let sbx: Sandbox;
  before(async () => {
    fx = await startFixture({ envVars: { GLOBAL_ONE: 'g1', SHARED: 'global' } });
    sbx = await fx.sandbox();
  });
  after(() => fx.close());

  it('runs a command with stdout and stderr callbacks, in order', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const result = await sbx.commands.run('echo one; echo two >&2; echo three', {
      onStdout: (d) => void out.push(d),
      onStderr: (d) => void err.push(d),
    });
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout, 'one\nthree\n');
    assert.equal(result.stderr, 'two\n');
    assert.equal(out.join(''), 'one\nthree\n');
    assert.equal(err.join(''), 'two\n');
  });

  it('reports non-zero exits as CommandExitError with the code and output', async () => {
    await assert.rejects(sbx.commands.run('echo partial; exit 7'), (e: unknown) => {
      assert.ok(e instanceof CommandExitError);
      assert.equal(e.exitCode, 7);
      assert.equal(e.stdout, 'partial\n');
      assert.equal(e.error, 'exit status 7');
      return true;
    });
  });

  it('layers envd PATH/HOME/USER, global env and request env, last wins', async () => {
    const r = await sbx.commands.run('echo "$HOME|$USER|$LOGNAME|$GLOBAL_ONE|$SHARED|$ONLY_REQ"', {
      envs: { SHARED: 'request', ONLY_REQ: 'r' },
    });
    assert.equal(r.stdout, `${fx.home}|user|user|g1|request|r\n`);
    const path = await sbx.commands.run('echo $PATH');
    assert.match(path.stdout, /\/bin/);
  });

  it('resolves the working directory: home by default, relative to home, absolute', async () => {
    mkdirSync(join(fx.home, 'sub'), { recursive: true });
    assert.equal((await sbx.commands.run('pwd')).stdout, `${fx.home}\n`);
    assert.equal(
      (await sbx.commands.run('pwd', { cwd: 'sub' })).stdout,
      `${join(fx.home, 'sub')}\n`,
    );
    assert.equal((await sbx.commands.run('pwd', { cwd: fx.dir })).stdout, `${fx.dir}\n`);
  });

  it('refuses a missing working directory with invalid_argument', async () => {
    await assert.rejects(sbx.commands.run('true', { cwd: 'does/not/exist' }), (e: unknown) => {
      assert.ok(e instanceof InvalidArgumentError);
      assert.match(String(e), /cwd '.*does\/not\/exist' does not exist/);
      return true;
    });
  });

  it(
    'runs as the default user with its uid, gid and supplementary groups',
    { skip: !IS_ROOT && 'needs root to switch users' },
    async () => {
      const r = await sbx.commands.run('id -u; id -g; id -G');
      const [uid, gid, groups] = r.stdout.trim().split('\n');
      assert.equal(uid, String(USER_UID));
      assert.equal(gid, String(USER_GID));
      assert.deepEqual(groups?.split(' ').map(Number).sort(), [USER_GID, EXTRA_GID].sort());
    },
  );

  it(
    'runs as the user named by the request',
    { skip: !IS_ROOT && 'needs root to switch users' },
    async () => {
      const r = await sbx.commands.run('id -u; echo $HOME', { user: 'root' });
      assert.equal(r.stdout, `0\n${join(fx.dir, 'root')}\n`);
    },
  );

  it('keeps a background process running across disconnects; connect, stdin, list, kill', async () => {
    const handle = await sbx.commands.run('while read line; do echo "got:$line"; done', {
      background: true,
      stdin: true,
    });
    const pid = handle.pid;
    await handle.disconnect();
    assert.ok(processAlive(pid), 'the process survives the client going away');
    const listed = await sbx.commands.list();
    const entry = listed.find((p) => p.pid === pid);
    assert.ok(entry);
    assert.equal(entry.cmd, '/bin/bash');
    assert.deepEqual(entry.args.slice(0, 2), ['-l', '-c']);

    const seen: string[] = [];
    const again = await sbx.commands.connect(pid, { onStdout: (d) => void seen.push(d) });
    await sbx.commands.sendStdin(pid, 'hello\n');
    await waitFor(() => seen.join('').includes('got:hello'), 5000, 'echoed stdin');
    assert.equal(await sbx.commands.kill(pid), true);
    await assert.rejects(
      again.wait(),
      (e: unknown) => e instanceof CommandExitError && e.exitCode === -1,
    );
    await waitFor(() => !processAlive(pid), 5000, 'process gone');
    assert.equal(
      (await sbx.commands.list()).some((p) => p.pid === pid),
      false,
    );
  });

  it('closes stdin so a reader sees EOF', async () => {
    const handle = await sbx.commands.run('cat; echo done', { background: true, stdin: true });
    await sbx.commands.sendStdin(handle.pid, 'abc');
    await sbx.commands.closeStdin(handle.pid);
    const result = await handle.wait();
    assert.equal(result.stdout, 'abcdone\n');
  });

  it('kills the process when the command timeout passes and reports a timeout', async () => {
    const started = Date.now();
    let pid = 0;
    await assert.rejects(
      sbx.commands.run('echo $$; sleep 30', {
        timeoutMs: 700,
        onStdout: (d) => void (pid = Number(d.trim())),
      }),
      (e: unknown) => e instanceof TimeoutError,
    );
    assert.ok(Date.now() - started < 10_000);
    assert.ok(pid > 0);
    await waitFor(() => !processAlive(pid), 5000, 'timed-out process killed');
  });

  it('kills a background process at its timeout even after the client left', async () => {
    const handle = await sbx.commands.run('sleep 30', { background: true, timeoutMs: 600 });
    await handle.disconnect();
    await waitFor(
      () => !processAlive(handle.pid),
      5000,
      'background process killed at its timeout',
    );
  });

  it('answers unknown pids with not_found: kill is false, connect throws', async () => {
    assert.equal(await sbx.commands.kill(999_999), false);
    await assert.rejects(sbx.commands.connect(999_999), (e: unknown) => e instanceof NotFoundError);
    await assert.rejects(
      sbx.commands.sendStdin(999_999, 'x'),
      (e: unknown) => e instanceof NotFoundError,
    );
  });

  it('starts many short commands concurrently', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => sbx.commands.run(`echo ${i}`)),
    );
    assert.deepEqual(
      results.map((r) => r.stdout),
      Array.from({ length: 8 }, (_, i) => `${i}\n`),
    );
  });
});
