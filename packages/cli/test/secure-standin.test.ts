/**
 * Secure sandboxes end to end through a real node and its proxy, with the
 * REAL envd behind it (stand-in machines, see helpers/envd-standin-launcher.ts):
 * envd demands the sandbox's access token; a fork child answers only to its
 * own token; after `POST /sandboxes/{id}/resume` the old token is refused
 * and the new one works; signed file URLs (what the e2b SDK's
 * `uploadUrl()`/`downloadUrl()` compute) work with the current token only.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getSignature } from 'e2b';
import { standInUnavailable } from './helpers/envd-standin-launcher.js';
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

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.node.url}${path}`, {
    method,
    headers: { 'x-api-key': t.node.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>,
  };
}

/** A call to the sandbox's envd through the node's proxy. */
async function envd(id: string, path: string, token?: string, init: RequestInit = {}) {
  const headers: Record<string, string> = {
    'e2b-sandbox-id': id,
    'e2b-sandbox-port': '49983',
    'content-type': 'application/octet-stream',
  };
  if (token !== undefined) headers['x-access-token'] = token;
  const res = await fetch(`${t.node.url}${path}`, { ...init, headers });
  return { status: res.status, text: await res.text() };
}

async function signedRead(id: string, path: string, token: string) {
  const sig = await getSignature({
    path,
    operation: 'read',
    user: undefined,
    envdAccessToken: token,
    expirationInSeconds: 60,
  });
  const q = new URLSearchParams({ path, signature: sig.signature });
  if (sig.expiration !== null && sig.expiration !== undefined)
    q.set('signature_expiration', String(sig.expiration));
  return envd(id, `/files?${q.toString()}`);
}

describe('secure sandboxes (stand-in machines, real envd)', { skip, timeout: 120_000 }, () => {
  it('demands the token, rotates it on fork and resume, and refuses the old one', async () => {
    const created = await api('POST', '/sandboxes', { templateID: 'base', secure: true });
    assert.equal(created.status, 201);
    const id = created.json.sandboxID as string;
    const first = created.json.envdAccessToken as string;
    assert.equal((await envd(id, '/envs')).status, 401, 'no token, no access');
    assert.equal((await envd(id, '/envs', 'wrong')).status, 401);
    assert.equal((await envd(id, '/envs', first)).status, 200);
    // The stand-in's envd is confined to a directory of its own (see envd-standin-launcher.ts).
    const rootName = readdirSync(join(t.home, 'roots')).find((d) => d.startsWith(`${id}-`));
    const note = join(t.home, 'roots', rootName ?? 'missing', 'note.txt');
    const put = await envd(id, `/files?path=${encodeURIComponent(note)}`, first, {
      method: 'POST',
      body: 'secret',
    });
    assert.equal(put.status, 200, put.text);
    const signed = await signedRead(id, note, first);
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.text, 'secret');

    const fork = await api('POST', `/sandboxes/${id}/fork`, { count: 1 });
    assert.equal(fork.status, 201, JSON.stringify(fork.json));
    const child = (fork.json as unknown as { sandbox: Record<string, string> }[])[0]?.sandbox;
    assert.ok(child?.envdAccessToken !== undefined && child.envdAccessToken !== first);
    assert.equal(
      (await envd(child.sandboxID as string, '/envs', first)).status,
      401,
      "the parent's token does not open the child",
    );
    assert.equal(
      (await envd(child.sandboxID as string, '/envs', child.envdAccessToken)).status,
      200,
    );
    assert.equal((await envd(id, '/envs', first)).status, 200, 'the parent keeps its token');

    assert.equal((await api('POST', `/sandboxes/${id}/pause`)).status, 204);
    const resumed = await api('POST', `/sandboxes/${id}/resume`, {});
    assert.equal(resumed.status, 201, JSON.stringify(resumed.json));
    const second = resumed.json.envdAccessToken as string;
    assert.notEqual(second, first);
    assert.equal(
      (await envd(id, '/envs', first)).status,
      401,
      'the old token is refused after resume',
    );
    assert.equal((await envd(id, '/envs', second)).status, 200);
    assert.equal((await signedRead(id, note, first)).status, 401, 'so is a URL it signed');
    const fresh = await signedRead(id, note, second);
    assert.equal(fresh.status, 200, fresh.text);
    for (const s of [id, child.sandboxID as string])
      assert.equal((await api('DELETE', `/sandboxes/${s}`)).status, 204);
  });
});
