/**
 * Token rotation with a real microVM (qemu driver, real guest and envd):
 * unlike the stand-in, the resumed envd comes back from the snapshot's
 * memory still holding the old token, so this checks that the node's
 * `/init` presents it and installs the new one, and that envd then refuses
 * the old token through the node's proxy. secure-standin.test.ts covers
 * the rest of the rules in seconds.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startVmNode, type VmNode } from './helpers/vm-node.js';

let t: VmNode | undefined;

before(async () => {
  t = await startVmNode('10.245.0.0/24');
});

after(async () => {
  await t?.close();
});

async function api(method: string, path: string, body?: unknown) {
  const node = (t as VmNode).node;
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'x-api-key': node.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>,
  };
}

async function envdStatus(id: string, token: string | undefined): Promise<number> {
  const headers: Record<string, string> = { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '49983' };
  if (token !== undefined) headers['x-access-token'] = token;
  const res = await fetch(`${(t as VmNode).node.url}/envs`, { headers });
  await res.arrayBuffer();
  return res.status;
}

describe('secure sandbox token rotation (real microVM)', { timeout: 900_000 }, () => {
  it('refuses the old token after POST /resume, accepts the new one', async () => {
    const created = await api('POST', '/sandboxes', {
      templateID: 'base',
      secure: true,
      timeout: 600,
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const id = created.json.sandboxID as string;
    const first = created.json.envdAccessToken as string;
    try {
      assert.equal(await envdStatus(id, undefined), 401);
      assert.equal(await envdStatus(id, first), 200);
      assert.equal((await api('POST', `/sandboxes/${id}/pause`)).status, 204);
      const resumed = await api('POST', `/sandboxes/${id}/resume`, {});
      assert.equal(resumed.status, 201, JSON.stringify(resumed.json));
      const second = resumed.json.envdAccessToken as string;
      assert.notEqual(second, first);
      assert.equal(await envdStatus(id, first), 401, 'the old token is refused');
      assert.equal(await envdStatus(id, second), 200, 'the new token works');
    } finally {
      await api('DELETE', `/sandboxes/${id}`);
    }
  });
});
