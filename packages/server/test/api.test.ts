// The node API over real sockets, with a STAND-IN launcher (see
// standin-launcher.ts) in place of microVMs: routes, E2B shapes, auth,
// errors, TTL and the proxy.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningNode } from '../src/index.js';
import { StandInLauncher, startStandInNode } from './standin-launcher.js';

const home = mkdtempSync(join(tmpdir(), 'aenv-api-'));
const launcher = new StandInLauncher();
let node: RunningNode;

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'x-api-key': node.apiKey, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    json: text === '' ? undefined : JSON.parse(text),
  };
}

async function create(body: Record<string, unknown> = {}) {
  const res = await call('POST', '/v2/sandboxes', { templateID: 'base', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  return res.json.sandboxID as string;
}

before(async () => {
  node = await startStandInNode(home, launcher);
});

after(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

describe('node API (stand-in launcher)', () => {
  it('stores a generated e2b-shaped API key with mode 0600', () => {
    assert.match(node.apiKey, /^e2b_[0-9a-f]{40}$/);
    assert.equal(statSync(node.apiKeyPath).mode & 0o777, 0o600);
  });

  it('creates with v1 and v2 and answers the E2B Sandbox shape', async () => {
    const v1 = await call('POST', '/sandboxes', { templateID: 'base', timeout: 60, secure: true });
    assert.equal(v1.status, 201);
    assert.match(v1.json.sandboxID, /^[a-z0-9]{20}$/);
    assert.equal(v1.json.templateID, 'base');
    assert.equal(v1.json.clientID, '');
    assert.equal(v1.json.envdVersion, '0.5.7');
    assert.match(v1.json.envdAccessToken, /^[0-9a-f]{64}$/);
    const guest = launcher.guests.at(-1);
    assert.equal(guest?.inits[0]?.body.accessToken, v1.json.envdAccessToken);
    assert.equal(typeof guest?.inits[0]?.body.entropy, 'string', 'fresh entropy on every start');
    // secure unless told otherwise: the e2b JS SDK 2.51 sends no `secure` and expects a token
    const v2 = await call('POST', '/v2/sandboxes', { templateID: 'base', envVars: { A: '1' } });
    assert.equal(v2.status, 201);
    assert.match(v2.json.envdAccessToken, /^[0-9a-f]{64}$/);
    assert.notEqual(v2.json.envdAccessToken, v1.json.envdAccessToken);
    assert.deepEqual(launcher.guests.at(-1)?.inits[0]?.body.envVars, { A: '1' });
    const open = await call('POST', '/v2/sandboxes', { templateID: 'base', secure: false });
    assert.equal(open.status, 201);
    assert.equal(open.json.envdAccessToken, undefined);
    for (const id of [v1.json.sandboxID, v2.json.sandboxID, open.json.sandboxID]) {
      assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);
    }
  });

  it('gets, lists with filters and pages, kills, then answers 404 JSON', async () => {
    const a = await create({ metadata: { team: 'rl', run: 'a b' } });
    const b = await create({ metadata: { team: 'rl' } });
    const c = await create({ metadata: { team: 'other' } });
    const got = await call('GET', `/sandboxes/${a}`);
    assert.equal(got.status, 200);
    assert.equal(got.json.state, 'running');
    assert.deepEqual(got.json.metadata, { team: 'rl', run: 'a b' });
    for (const k of ['startedAt', 'endAt', 'cpuCount', 'memoryMB', 'diskSizeMB', 'envdVersion']) {
      assert.ok(k in got.json, k);
    }
    const meta = encodeURIComponent(`team=rl&run=${encodeURIComponent('a b')}`);
    const filtered = await call('GET', `/v2/sandboxes?metadata=${meta}`);
    assert.deepEqual(
      filtered.json.map((s: { sandboxID: string }) => s.sandboxID),
      [a],
    );
    const page1 = await call('GET', '/v2/sandboxes?limit=2');
    assert.equal(page1.json.length, 2);
    const token = page1.headers.get('x-next-token');
    assert.ok(token);
    const page2 = await call('GET', `/v2/sandboxes?limit=2&nextToken=${token}`);
    assert.deepEqual(
      page2.json.map((s: { sandboxID: string }) => s.sandboxID),
      [c],
    );
    assert.equal(page2.headers.get('x-next-token'), null);
    assert.equal((await call('GET', '/v2/sandboxes?state=paused')).json.length, 0);
    assert.equal((await call('GET', '/sandboxes')).json.length, 3);
    for (const id of [a, b, c])
      assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);
    const gone = await call('GET', `/sandboxes/${a}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(
      { code: gone.json.code, error_code: gone.json.error_code },
      { code: 404, error_code: 'SBX_NOT_FOUND' },
    );
    assert.equal((await call('DELETE', `/sandboxes/${a}`)).status, 404);
    assert.ok(
      launcher.guests.filter((g) => [a, b, c].includes(g.spec.sandboxId)).every((g) => g.stopped),
    );
  });

  it('rejects a wrong API key with 401 JSON and keeps serving', async () => {
    const res = await call('GET', '/v2/sandboxes', undefined, { 'x-api-key': 'e2b_wrong' });
    assert.equal(res.status, 401);
    assert.equal(res.json.code, 401);
    assert.equal(res.json.error_code, 'API_UNAUTHENTICATED');
    const none = await fetch(`${node.url}/v2/sandboxes`);
    assert.equal(none.status, 401);
    assert.equal(((await none.json()) as { code: number }).code, 401);
    assert.equal((await call('GET', '/health')).status, 200);
  });

  it('answers 400 JSON naming the bad field, 404 for unknown templates and routes', async () => {
    const noTemplate = await call('POST', '/v2/sandboxes', { timeout: 10 });
    assert.equal(noTemplate.status, 400);
    assert.match(noTemplate.json.message, /'templateID'/);
    const badTimeout = await call('POST', '/sandboxes', { templateID: 'base', timeout: 'soon' });
    assert.equal(badTimeout.status, 400);
    assert.match(badTimeout.json.message, /'timeout'/);
    const badMeta = await call('POST', '/sandboxes', { templateID: 'base', metadata: { a: 1 } });
    assert.match(badMeta.json.message, /'metadata\.a'/);
    const notJson = await call('POST', '/sandboxes', '{nope');
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json.error_code, 'API_BODY_INVALID');
    const tpl = await call('POST', '/sandboxes', { templateID: 'nope' });
    assert.equal(tpl.status, 404);
    assert.equal(tpl.json.error_code, 'TEMPLATE_NOT_FOUND');
    const route = await call('GET', '/nothing/here');
    assert.equal(route.status, 404);
    assert.equal(route.json.code, 404);
    const badTimeoutRoute = await call('POST', '/sandboxes/x/timeout', {});
    assert.match(badTimeoutRoute.json.message, /'timeout'/);
  });

  it('takes E2B network settings at create and replaces egress rules with PUT', async () => {
    const id = await create({
      allow_internet_access: false,
      network: { allowOut: ['10.1.2.3', '192.0.2.0/24'], allowPublicTraffic: false },
    });
    const guest = launcher.guests.find((g) => g.spec.sandboxId === id);
    assert.equal(guest?.spec.egress.allowInternetAccess, false);
    assert.equal(guest?.spec.egress.allowOut.length, 2);
    const detail = (await call('GET', `/sandboxes/${id}`)).json;
    assert.equal(detail.allowInternetAccess, false);
    assert.deepEqual(detail.network.allowOut, ['10.1.2.3', '192.0.2.0/24']);
    assert.equal(detail.network.allowPublicTraffic, false);
    const put = await call('PUT', `/sandboxes/${id}/network`, { denyOut: ['198.51.100.7'] });
    assert.equal(put.status, 204);
    assert.equal(guest?.egressUpdates.at(-1)?.allowInternetAccess, true);
    assert.deepEqual((await call('GET', `/sandboxes/${id}`)).json.network.denyOut, [
      '198.51.100.7',
    ]);
    const bad = await call('PUT', `/sandboxes/${id}/network`, { allowOut: ['not-an-ip/99'] });
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /allowOut\[0\]/);
    const domains = await call('POST', '/v2/sandboxes', {
      templateID: 'base',
      network: { allowOut: ['*.pypi.org'] },
    });
    assert.equal(domains.status, 400);
    assert.match(domains.json.message, /domain/);
    assert.equal((await call('PUT', '/sandboxes/nope/network', {})).status, 404);
    assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);
  });

  it('extends the TTL on connect, resets it with timeout, and kills on expiry with autoPause false', async () => {
    const id = await create({ timeout: 1, autoPause: false });
    const before = new Date((await call('GET', `/sandboxes/${id}`)).json.endAt).getTime();
    const conn = await call('POST', `/v2/sandboxes/${id}/connect`, { timeout: 2 });
    assert.equal(conn.status, 200);
    assert.equal(conn.json.sandboxID, id);
    const extended = new Date((await call('GET', `/sandboxes/${id}`)).json.endAt).getTime();
    assert.ok(extended > before);
    assert.equal((await call('POST', `/sandboxes/${id}/timeout`, { timeout: 1 })).status, 204);
    await sleep(1600);
    assert.equal((await call('GET', `/sandboxes/${id}`)).status, 404);
    assert.ok(launcher.guests.find((g) => g.spec.sandboxId === id)?.stopped);
    const v1 = await call('POST', `/sandboxes/${id}/connect`, { timeout: 5 });
    assert.equal(v1.status, 404);
  });

  it('reports a sandbox whose machine dies as failed, frees it, and kills it cleanly', async () => {
    const id = await create();
    const guest = launcher.guests.find((g) => g.spec.sandboxId === id);
    guest?.crash();
    await sleep(50);
    const got = await call('GET', `/sandboxes/${id}`);
    assert.equal(got.status, 200);
    assert.match(String(got.json.failureReason), /machine exited: crashed/);
    assert.ok(guest?.stopped, 'its machine was released');
    assert.equal(node.orchestrator.countByState().failed, 1);
    assert.match(node.metrics.render(), /op="machine-exit",result="failed"\} 1/);
    assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);
    assert.equal((await call('GET', `/sandboxes/${id}`)).status, 404);
  });

  it('kills a sandbox that is still starting, leaving nothing behind', async () => {
    launcher.bootDelayMs = 300;
    try {
      const pending = call('POST', '/v2/sandboxes', { templateID: 'base' });
      await sleep(100);
      const [id] = node.orchestrator.list({ states: ['creating'] }).map((r) => r.id);
      assert.equal(id, undefined, 'creating sandboxes are not listed');
      await node.orchestrator.close({ pauseRunning: false }).catch(() => undefined);
      const res = await pending;
      assert.ok(res.status >= 400);
    } finally {
      launcher.bootDelayMs = 0;
    }
  });
});

describe('proxy (stand-in launcher)', () => {
  let node2: RunningNode;
  const home2 = mkdtempSync(join(tmpdir(), 'aenv-proxy-'));
  before(async () => {
    node2 = await startStandInNode(home2, new StandInLauncher(), { AENV_DOMAIN: 'sbx.test' });
  });
  after(async () => {
    await node2.close();
    rmSync(home2, { recursive: true, force: true });
  });

  async function createOn2(): Promise<string> {
    const res = await fetch(`${node2.url}/v2/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': node2.apiKey },
      body: JSON.stringify({ templateID: 'base' }),
    });
    return ((await res.json()) as { sandboxID: string }).sandboxID;
  }

  it('routes by headers even on control-plane paths, without forwarding the API key', async () => {
    const id = await createOn2();
    const health = await fetch(`${node2.url}/health`, {
      headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '49983' },
    });
    assert.equal(health.status, 204, 'envd /health, not the node /health (200)');
    const echo = await fetch(`${node2.url}/echo?x=1`, {
      method: 'POST',
      headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '3000', 'x-api-key': node2.apiKey },
      body: 'payload',
    });
    assert.deepEqual(await echo.json(), { method: 'POST', url: '/echo?x=1', body: 'payload' });
    assert.equal(echo.headers.get('x-seen-api-key'), '');
  });

  it('routes by {port}-{id}.{domain} host', async () => {
    const id = await createOn2();
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(node2.url);
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: '/health',
          headers: { host: `49983-${id}.sbx.test` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 204);
  });

  it('streams responses without buffering', async () => {
    const id = await createOn2();
    const res = await fetch(`${node2.url}/stream`, { headers: { 'e2b-sandbox-id': id } });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const t0 = performance.now();
    const first = await reader.read();
    const firstAt = performance.now() - t0;
    assert.equal(Buffer.from(first.value ?? []).toString(), 'first\n');
    assert.ok(firstAt < 250, `first chunk took ${firstAt} ms: the proxy buffers`);
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += Buffer.from(r.value).toString();
    assert.equal(rest, 'second\n');
  });

  it('forwards upgrades as raw streams', async () => {
    const id = await createOn2();
    const u = new URL(node2.url);
    const sock = connect(Number(u.port), u.hostname);
    sock.write(
      `GET /ws HTTP/1.1\r\nhost: x\r\ne2b-sandbox-id: ${id}\r\nconnection: upgrade\r\nupgrade: echo\r\n\r\n`,
    );
    let got = '';
    sock.on('data', (d: Buffer) => {
      got += d.toString();
      if (got.includes('\r\n\r\n') && !got.includes('ping')) sock.write('ping');
    });
    for (let i = 0; i < 50 && !got.includes('ping'); i++) await sleep(20);
    sock.destroy();
    assert.match(got, /^HTTP\/1.1 101/);
    assert.ok(got.endsWith('ping'));
  });

  it('answers 502 JSON for unknown sandboxes, also on upgrades', async () => {
    const res = await fetch(`${node2.url}/health`, { headers: { 'e2b-sandbox-id': 'nope' } });
    assert.equal(res.status, 502);
    const body = (await res.json()) as { code: number; sandboxId: string };
    assert.equal(body.code, 502);
    assert.equal(body.sandboxId, 'nope');
    const u = new URL(node2.url);
    const sock = connect(Number(u.port), u.hostname);
    sock.write(
      'GET /ws HTTP/1.1\r\nhost: x\r\ne2b-sandbox-id: nope\r\nconnection: upgrade\r\nupgrade: echo\r\n\r\n',
    );
    let got = '';
    sock.on('data', (d: Buffer) => (got += d.toString()));
    await new Promise((r) => sock.on('close', r));
    assert.match(got, /^HTTP\/1.1 502/);
  });
});
