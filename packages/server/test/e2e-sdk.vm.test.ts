// End to end: `aenv server`'s node with real microVMs under QEMU, driven by
// the real, unmodified `e2b` npm SDK through the node's API and proxy; and
// tenants: another tenant's key cannot see, reach or run anything in a
// sandbox it does not own.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { release } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { CommandExitError, Sandbox, SandboxNotFoundError } from 'e2b';
import { startTestNode, type TestNode } from './node-harness.js';

let t: TestNode;

before(async () => {
  t = await startTestNode();
});

after(async () => {
  await t?.close();
});

describe('e2b SDK against a node (real microVMs)', { timeout: 600_000 }, () => {
  it('creates, runs commands, moves files, lists, kills', async () => {
    const sbx = await Sandbox.create('base', { ...t.sdk, timeoutMs: 300_000 });
    try {
      const out = await sbx.commands.run('echo hello && uname -r');
      const [hello, kernel] = out.stdout.trim().split('\n');
      assert.equal(hello, 'hello');
      assert.match(kernel ?? '', /cloud-amd64$/);
      assert.notEqual(kernel, release(), 'the guest runs its own kernel, not the host');
      await sbx.files.write('/home/user/note.txt', 'written through envd');
      assert.equal(await sbx.files.read('/home/user/note.txt'), 'written through envd');
      await assert.rejects(
        sbx.commands.run('exit 3'),
        (err: unknown) => err instanceof CommandExitError && err.exitCode === 3,
      );
      const listed = await Sandbox.list({ ...t.sdk }).nextItems();
      assert.ok(listed.some((s) => s.sandboxId === sbx.sandboxId));
      assert.equal(await sbx.isRunning(), true);
    } finally {
      assert.equal(await sbx.kill(), true);
    }
    assert.equal(await Sandbox.kill(sbx.sandboxId, { ...t.sdk }), false, 'already gone');
    const res = await fetch(`${t.node.url}/sandboxes/${sbx.sandboxId}`, {
      headers: { 'x-api-key': t.node.apiKey },
    });
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: number }).code, 404);
  });

  it('isolates two sandboxes from each other', async () => {
    const [a, b] = await Promise.all([
      Sandbox.create('base', { ...t.sdk }),
      Sandbox.create('base', { ...t.sdk }),
    ]);
    try {
      await a.files.write('/tmp/only-in-a', 'a');
      await a.commands.run('sleep 1234', { background: true });
      assert.equal(await a.files.exists('/tmp/only-in-a'), true);
      assert.equal(await b.files.exists('/tmp/only-in-a'), false);
      const inA = await a.commands.run("pgrep -fx 'sleep 1234' || true");
      assert.notEqual(inA.stdout.trim(), '');
      const inB = await b.commands.run("pgrep -fx 'sleep 1234' || echo none");
      assert.equal(inB.stdout.trim(), 'none');
    } finally {
      await Promise.all([a.kill(), b.kill()]);
    }
  });

  it('answers a wrong key with 401 JSON and a malformed body with 400 naming the field', async () => {
    const bad = await fetch(`${t.node.url}/v2/sandboxes`, { headers: { 'x-api-key': 'e2b_00' } });
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as { code: number }).code, 401);
    const malformed = await fetch(`${t.node.url}/v2/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': t.node.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ templateID: 'base', timeout: -5 }),
    });
    assert.equal(malformed.status, 400);
    assert.match(((await malformed.json()) as { message: string }).message, /'timeout'/);
    const health = await fetch(`${t.node.url}/health`);
    assert.equal(health.status, 200, 'the daemon keeps serving');
  });

  it("keeps tenants apart: another tenant's SDK cannot see, reach or run in a sandbox", async () => {
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${t.node.url}${path}`, {
        method,
        headers: { 'x-api-key': t.node.apiKey, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return {
        status: res.status,
        json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>,
      };
    };
    assert.equal((await admin('POST', '/admin/tenants', { id: 'tenant-b' })).status, 201);
    const made = await admin('POST', '/admin/keys', { tenant: 'tenant-b', name: 'e2e' });
    assert.equal(made.status, 201);
    const b = { ...t.sdk, apiKey: String(made.json.key) };
    const sbx = await Sandbox.create('base', { ...t.sdk, timeoutMs: 300_000 });
    try {
      const id = sbx.sandboxId;
      const listedByB = await Sandbox.list({ ...b }).nextItems();
      assert.ok(!listedByB.some((s) => s.sandboxId === id), "B's list omits A's sandbox");
      const notFound = (err: unknown) => err instanceof SandboxNotFoundError;
      await assert.rejects(Sandbox.connect(id, { ...b }), notFound, 'B cannot connect');
      await assert.rejects(Sandbox.getInfo(id, { ...b }), notFound);
      await assert.rejects(Sandbox.setTimeout(id, 60_000, { ...b }), notFound);
      assert.equal(await Sandbox.kill(id, { ...b }), false, "B's kill finds nothing");
      const fork = await fetch(`${t.node.url}/sandboxes/${id}/fork`, {
        method: 'POST',
        headers: { 'x-api-key': b.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ count: 1 }),
      });
      assert.equal(fork.status, 404, 'B cannot fork it');
      // envd's process RPC through the proxy, as the SDK calls it, minus A's token.
      const token = String((await admin('GET', `/sandboxes/${id}`)).json.envdAccessToken);
      const rpc = (headers: Record<string, string>) =>
        fetch(`${t.node.url}/process.Process/List`, {
          method: 'POST',
          headers: {
            'e2b-sandbox-id': id,
            'e2b-sandbox-port': '49983',
            'content-type': 'application/json',
            'connect-protocol-version': '1',
            ...headers,
          },
          body: '{}',
        });
      assert.equal((await rpc({})).status, 401, 'no access token: refused');
      assert.equal((await rpc({ 'x-api-key': b.apiKey })).status, 401, "B's key is no token");
      assert.equal((await rpc({ 'x-access-token': token })).status, 200, "A's token works");
      const byHost = await new Promise<number>((resolve, reject) => {
        const host = `49983-${id}.${new URL(t.node.url).host}`;
        const req = request(
          `${t.node.url}/process.Process/List`,
          { method: 'POST', headers: { host, 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.once('error', reject);
        req.end('{}');
      });
      assert.equal(byHost, 401, 'through the host name, no token: refused');
      assert.equal((await sbx.commands.run('echo still-mine')).stdout, 'still-mine\n');
      assert.equal(await sbx.isRunning(), true);
    } finally {
      await sbx.kill();
      assert.equal((await admin('DELETE', '/admin/tenants/tenant-b')).status, 204);
    }
  });
});
