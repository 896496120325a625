/**
 * Bad input gets its documented error, never a 500 or a crash: paths that
 * leave envd's root (directly, via `..` or through a symlink), unknown
 * users, `~other`, pty/stdin mismatches, garbage bodies.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AuthenticationError, SandboxError, type Sandbox } from 'e2b';
import { startFixture, type EnvdFixture } from './helpers/envd-fixture.js';
import { callStream, callUnary } from './helpers/connect-wire.js';

describe('bad input', () => {
  let fx: EnvdFixture;
  let sbx: Sandbox;
  before(async () => {
    fx = await startFixture();
    sbx = await fx.sandbox();
    symlinkSync('/etc', join(fx.home, 'escape'));
  });
  after(() => fx.close());

  it('refuses paths outside the root with permission_denied (RPC) and 403 (HTTP)', async () => {
    for (const path of ['/etc/passwd', '../../../../../etc/passwd', 'escape/passwd']) {
      const res = await callUnary(fx.url, 'filesystem.Filesystem/Stat', { path });
      assert.deepEqual([res.status, res.json.code], [403, 'permission_denied'], path);
      const get = await fetch(`${fx.url}/files?path=${encodeURIComponent(path)}`);
      assert.equal(get.status, 403, path);
      assert.equal(((await get.json()) as { code: number }).code, 403);
    }
    const put = await fetch(`${fx.url}/files?path=/tmp/outside-${process.pid}`, {
      method: 'POST',
      body: 'x',
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(put.status, 403);
    await assert.rejects(
      sbx.files.write('escape/evil', 'x'),
      (e: unknown) => e instanceof SandboxError,
    );
    await assert.rejects(sbx.commands.run('pwd', { cwd: '/' }), /permission_denied|outside/);
    const move = await callUnary(fx.url, 'filesystem.Filesystem/Move', {
      source: 'x',
      destination: '/tmp/x',
    });
    assert.equal(move.json.code, 'permission_denied');
  });

  it('refuses unknown users: unauthenticated RPCs, 401 on /files', async () => {
    await assert.rejects(
      sbx.commands.run('true', { user: 'ghost' }),
      (e: unknown) => e instanceof AuthenticationError,
    );
    await assert.rejects(
      sbx.files.list('.', { user: 'ghost' }),
      (e: unknown) => e instanceof AuthenticationError,
    );
    assert.equal((await fetch(`${fx.url}/files?path=x&username=ghost`)).status, 401);
  });

  it('refuses ~other paths with invalid_argument', async () => {
    const res = await callUnary(fx.url, 'filesystem.Filesystem/Stat', { path: '~root/x' });
    assert.deepEqual([res.status, res.json.code], [400, 'invalid_argument']);
  });

  it('refuses input of the wrong kind and resizes of pipe processes', async () => {
    const handle = await sbx.commands.run('sleep 5', { background: true });
    await assert.rejects(
      sbx.pty.sendInput(handle.pid, new Uint8Array([65])),
      /failed_precondition|tty not assigned/,
    );
    await assert.rejects(
      sbx.pty.resize(handle.pid, { cols: 10, rows: 10 }),
      /failed_precondition|tty not assigned/,
    );
    await assert.rejects(sbx.commands.sendStdin(handle.pid, 'x'), /stdin not enabled/);
    await sbx.commands.kill(handle.pid);
  });

  it('survives garbage: bad envelopes, empty and huge JSON, odd methods', async () => {
    const garbage = await fetch(`${fx.url}/process.Process/Start`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json' },
      body: Buffer.from([0, 0, 0, 0, 9, 1, 2]),
    });
    assert.equal(garbage.status, 200);
    assert.match(
      Buffer.from(await garbage.arrayBuffer()).toString(),
      /"code":"(invalid_argument|internal)"/,
    );
    const empty = await callStream(fx.url, 'process.Process/Start', {});
    assert.equal((empty.frames[0]?.json.error as Record<string, string>).code, 'invalid_argument');
    const huge = await fetch(`${fx.url}/init`, {
      method: 'POST',
      body: `{"envVars":{"A":"${'x'.repeat(2 << 20)}"}}`,
    });
    assert.equal(huge.status, 400);
    assert.equal((await fetch(`${fx.url}/files`, { method: 'DELETE' })).status, 404);
    assert.equal((await fetch(`${fx.url}/health`)).status, 204);
  });
});

describe('a default user that does not exist', () => {
  let fx: EnvdFixture;
  before(async () => {
    fx = await startFixture({ defaultUser: 'ghost' });
  });
  after(() => fx.close());

  it('fails requests that act as a user, not those that do not', async () => {
    const sbx = await fx.sandbox();
    await assert.rejects(
      sbx.commands.run('true'),
      (e: unknown) => e instanceof AuthenticationError,
    );
    assert.deepEqual(await sbx.commands.list(), []);
    const asRoot = await sbx.commands.run('echo $USER', { user: 'root' });
    assert.equal(asRoot.stdout, 'root\n');
  });
});
