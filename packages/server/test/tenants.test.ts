// Tenants, API keys and quotas on one node over real sockets, with the
// STAND-IN launcher (see standin-launcher.ts) in place of microVMs: every
// forbidden thing is attempted with another tenant's key and must answer
// like a missing resource; keys are stored hashed; quotas answer 429.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  loadNodeConfig,
  openNodeState,
  silentLogger,
  startNode,
  type RunningNode,
} from '../src/index.js';
import { seedStandInTemplate, StandInLauncher } from './standin-launcher.js';

const home = mkdtempSync(join(tmpdir(), 'aenv-tenants-'));
const launcher = new StandInLauncher();
const CLUSTER_KEY = 'e2b_' + 'c'.repeat(40);
let node: RunningNode;
let keyA: string;
let keyB: string;
let memberA: string;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function call(
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: text === '' ? undefined : JSON.parse(text),
  };
}

const admin = (method: string, path: string, body?: unknown) =>
  call(node.apiKey, method, path, body);

async function newKey(tenant: string, role = 'admin'): Promise<string> {
  const res = await admin('POST', '/admin/keys', { tenant, role, name: `${tenant}-${role}` });
  assert.equal(res.status, 201, res.text);
  return res.json.key as string;
}

async function create(key: string, body: Record<string, unknown> = {}): Promise<Answer> {
  return call(key, 'POST', '/v2/sandboxes', { templateID: 'base', timeout: 300, ...body });
}

before(async () => {
  const state = openNodeState(home);
  await seedStandInTemplate(state);
  node = await startNode({
    config: loadNodeConfig(undefined, { AENV_HOME: home, AENV_PORT: '0' }),
    launcher,
    state,
    envdVersion: '0.5.7',
    logger: silentLogger,
    // A stand-in of the cluster seam: only its key matters here.
    cluster: {
      nodeId: 'n1',
      hooks: {},
      apiKeys: [CLUSTER_KEY],
      routes: () => [],
      recovered: () => Promise.resolve(),
      status: () => 'ready',
    },
  });
  for (const id of ['team-a', 'team-b'])
    assert.equal((await admin('POST', '/admin/tenants', { id })).status, 201);
  keyA = await newKey('team-a');
  keyB = await newKey('team-b');
  memberA = await newKey('team-a', 'member');
});

after(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

describe('tenants on a node (stand-in launcher)', () => {
  it('stores keys hashed: the plain keys appear nowhere in $AENV_HOME but the 0600 client file', () => {
    const files: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) files.push(p);
      }
    };
    walk(home);
    const keyFile = join(home, 'api-key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    for (const f of files) {
      const bytes = readFileSync(f).toString('latin1');
      for (const k of [keyA, keyB, memberA])
        assert.ok(!bytes.includes(k), `${f} holds a plain key`);
      if (f !== keyFile) assert.ok(!bytes.includes(node.apiKey), `${f} holds the local key`);
    }
    assert.ok(
      files.some((f) => f.endsWith('node.db')),
      'the store was read',
    );
  });

  it("answers 404 for every attempt on another tenant's sandbox, snapshot and template", async () => {
    const a = await create(keyA, { network: { allowPublicTraffic: false } });
    assert.equal(a.status, 201, a.text);
    const id = a.json.sandboxID as string;
    const snap = await call(keyA, 'POST', `/sandboxes/${id}/snapshots`, { name: 'a-snap' });
    assert.equal(snap.status, 201, snap.text);
    const attempts: [string, string, unknown?][] = [
      ['GET', `/sandboxes/${id}`],
      ['DELETE', `/sandboxes/${id}`],
      ['POST', `/sandboxes/${id}/pause`, {}],
      ['POST', `/sandboxes/${id}/connect`, { timeout: 60 }],
      ['POST', `/v2/sandboxes/${id}/connect`, {}],
      ['POST', `/sandboxes/${id}/resume`, {}],
      ['POST', `/sandboxes/${id}/timeout`, { timeout: 60 }],
      ['POST', `/sandboxes/${id}/refreshes`, {}],
      ['PUT', `/sandboxes/${id}/network`, { allowOut: [] }],
      ['POST', `/sandboxes/${id}/fork`, {}],
      ['POST', `/sandboxes/${id}/snapshots`, {}],
      ['GET', `/sandboxes/${id}/logs`],
      ['GET', `/sandboxes/${id}/metrics`],
      ['GET', `/snapshots/${snap.json.snapshotID}`],
      ['GET', `/snapshots/a-snap`],
      ['DELETE', `/snapshots/${snap.json.snapshotID}`],
    ];
    for (const [method, path, body] of attempts) {
      const b = await call(keyB, method, path, body);
      const missing = await call(
        keyB,
        method,
        path.replace(id, 'x'.repeat(20)).replace(/snapshots\/\w+$/, 'snapshots/nope'),
        body,
      );
      assert.equal(b.status, 404, `${method} ${path}: ${b.text}`);
      assert.equal(b.json.code, 404);
      assert.equal(
        b.json.error_code,
        missing.json.error_code,
        `${method} ${path} reveals existence`,
      );
    }
    for (const from of [snap.json.snapshotID, 'a-snap']) {
      const r = await create(keyB, { templateID: from });
      assert.equal(r.status, 404, r.text);
      assert.equal(r.json.error_code, 'TEMPLATE_NOT_FOUND');
    }
    // Lists show only the caller's.
    for (const path of ['/sandboxes', '/v2/sandboxes', '/snapshots']) {
      const b = await call(keyB, 'GET', path);
      assert.equal(b.status, 200);
      assert.deepEqual(b.json, [], path);
      assert.ok((await call(keyA, 'GET', path)).json.length > 0, path);
    }
    // B learns none of A's tokens through any route.
    for (const path of [
      '/sandboxes',
      '/v2/sandboxes',
      '/snapshots',
      '/templates',
      `/sandboxes/${id}`,
      '/nodes',
    ]) {
      const b = await call(keyB, 'GET', path);
      for (const t of [a.json.envdAccessToken, a.json.trafficAccessToken])
        assert.ok(!b.text.includes(t), path);
    }
    // The proxy needs no API key: A's private port needs A's traffic token.
    const proxied = await fetch(`${node.url}/echo`, {
      headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '3000' },
    });
    await proxied.text();
    assert.equal(proxied.status, 401);
    assert.equal((await call(keyA, 'GET', `/sandboxes/${id}`)).status, 200, 'A still sees it');
    assert.equal((await call(keyA, 'DELETE', `/sandboxes/${id}`)).status, 204);
  });

  it("makes fork children and snapshot starts the caller's", async () => {
    const a = await create(keyA);
    const kids = await call(keyA, 'POST', `/sandboxes/${a.json.sandboxID}/fork`, { count: 1 });
    assert.equal(kids.status, 201, kids.text);
    const child = kids.json[0].sandbox.sandboxID as string;
    assert.equal((await call(keyB, 'GET', `/sandboxes/${child}`)).status, 404);
    assert.equal((await call(keyA, 'GET', `/sandboxes/${child}`)).status, 200);
    for (const sid of [a.json.sandboxID, child])
      assert.equal((await call(keyA, 'DELETE', `/sandboxes/${sid}`)).status, 204);
  });

  it('refuses revoked keys at once and non-admin keys on admin routes', async () => {
    const key = await newKey('team-b', 'member');
    assert.equal((await call(key, 'GET', '/v2/sandboxes')).status, 200);
    assert.equal((await call(key, 'GET', '/admin/tenants')).status, 403);
    assert.equal(
      (await call(key, 'GET', '/admin/tenants')).json.error_code,
      'TENANT_ADMIN_REQUIRED',
    );
    const keys = await admin('GET', '/admin/keys?tenant=team-b');
    const view = keys.json.find(
      (k: { prefix: string }) => key.startsWith(k.prefix) && k.prefix.length === 12,
    );
    assert.ok(
      view !== undefined && !JSON.stringify(keys.json).includes(key),
      'listed without the key',
    );
    assert.equal((await admin('DELETE', `/admin/keys/${view.id}`)).status, 204);
    assert.equal((await call(key, 'GET', '/v2/sandboxes')).status, 401);
  });

  it('honours x-aenv-tenant only with the cluster key', async () => {
    const a = await create(keyA);
    const asA = { 'x-aenv-tenant': 'team-a' };
    const listed = (k: string, h: Record<string, string> = {}) =>
      call(k, 'GET', '/v2/sandboxes', undefined, h);
    assert.equal(
      (await listed(CLUSTER_KEY, asA)).json.length,
      1,
      'cluster key + header acts as team-a',
    );
    assert.equal((await listed(CLUSTER_KEY, { 'x-aenv-tenant': 'team-b' })).json.length, 0);
    assert.ok((await listed(CLUSTER_KEY)).json.length >= 1, 'operator view sees all');
    assert.equal(
      (await listed(keyB, asA)).json.length,
      0,
      'a tenant key + header stays its tenant',
    );
    assert.equal(
      (await call(keyB, 'GET', `/sandboxes/${a.json.sandboxID}`, undefined, asA)).status,
      404,
    );
    const made = await create(CLUSTER_KEY, {});
    assert.equal((await call(keyB, 'GET', `/sandboxes/${made.json.sandboxID}`)).status, 404);
    assert.equal(
      (await call(node.apiKey, 'GET', `/sandboxes/${made.json.sandboxID}`)).status,
      200,
      'operator creates go to default',
    );
    for (const [k, sid] of [
      [keyA, a.json.sandboxID],
      [node.apiKey, made.json.sandboxID],
    ]) {
      assert.equal((await call(k, 'DELETE', `/sandboxes/${sid}`)).status, 204);
    }
  });

  it('answers 429 with Retry-After for each quota and never overshoots under concurrent creates', async () => {
    assert.equal(
      (await admin('POST', '/admin/tenants', { id: 'team-q', quotas: { maxSandboxes: 2 } })).status,
      201,
    );
    const q = await newKey('team-q', 'member');
    const tries = await Promise.all(Array.from({ length: 6 }, () => create(q)));
    assert.equal(tries.filter((t) => t.status === 201).length, 2, 'exactly the quota');
    const refused = tries.find((t) => t.status === 429);
    assert.equal(refused?.json.error_code, 'TENANT_QUOTA_EXCEEDED');
    assert.match(refused?.json.message ?? '', /maxSandboxes: limit 2, in use \d, asked 1/);
    assert.equal(refused?.headers.get('retry-after'), '5');
    const ids = tries.filter((t) => t.status === 201).map((t) => t.json.sandboxID as string);
    // Fork children count too.
    assert.equal((await call(q, 'POST', `/sandboxes/${ids[0]}/fork`, { count: 1 })).status, 429);
    // vCPUs / memory of running ones: pausing frees them, resuming needs them back.
    const vcpus = (await call(q, 'GET', `/sandboxes/${ids[0]}`)).json.cpuCount as number;
    assert.equal((await call(q, 'POST', `/sandboxes/${ids[0]}/pause`, {})).status, 204);
    await admin('PATCH', '/admin/tenants/team-q', {
      quotas: { maxSandboxes: null, maxVcpus: vcpus },
    });
    const resumed = await call(q, 'POST', `/sandboxes/${ids[0]}/connect`, { timeout: 60 });
    assert.equal(resumed.status, 429, resumed.text);
    assert.match(resumed.json.message, /maxVcpus/);
    await admin('PATCH', '/admin/tenants/team-q', { quotas: { maxVcpus: null, maxMemoryMB: 1 } });
    assert.match((await create(q)).json.message, /maxMemoryMB/);
    const usage = await admin('GET', '/admin/tenants/team-q');
    assert.deepEqual(usage.json.usage.sandboxes, 2);
    // Rate: burst 1, the second create at once waits.
    await admin('PATCH', '/admin/tenants/team-q', {
      quotas: { maxMemoryMB: null, createsPerSecond: 0.5 },
    });
    const first = await create(q);
    assert.equal(first.status, 201, first.text);
    const second = await create(q);
    assert.equal(second.status, 429);
    assert.match(second.json.message, /createsPerSecond/);
    assert.equal(second.headers.get('retry-after'), '2');
    for (const sid of [...ids, first.json.sandboxID])
      assert.equal((await call(q, 'DELETE', `/sandboxes/${sid}`)).status, 204);
    // A tenant that owns nothing can go; its keys stop working.
    assert.equal((await admin('DELETE', '/admin/tenants/team-q')).status, 204);
    assert.equal((await call(q, 'GET', '/v2/sandboxes')).status, 401);
  });
});
