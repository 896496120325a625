// Tenants and API keys on the gateway, against a real redis-server, two real
// gateway replicas and two stand-in nodes (loopback HTTP servers answering
// the node calls and recording them): the admin API, keys stored only
// hashed, a revoke through one replica refused by the other, tenant
// isolation on every sandbox route and the data plane, the tenant header on
// every forwarded node call, and quotas (429 + Retry-After; concurrent
// creates through both replicas never pass maxSandboxes; a failed create
// gives its reservation back).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { TENANT_HEADER, type CreatedApiKey, type TenantView } from '@aenv/shared';
import { startGateway, type RunningGateway } from '../src/gateway/gateway-server.js';
import { TenantKeys } from '../src/gateway/tenant-keys.js';
import { silentLogger } from '../src/log.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { createStrategy } from '../src/scheduler/strategies.js';
import { ClusterState } from '../src/state/cluster-state.js';
import { connectRedis } from '../src/state/redis-connection.js';
import { redisServerAvailable, startRedisServer, type TestRedis } from '../src/testing/index.js';
import { startStandInNode, type StandInNode } from './helpers/stand-in-node.js';

const skip = redisServerAvailable()
  ? false
  : 'redis-server is not installed (apt install redis-server)';
if (skip !== false) console.log(`# skipped: ${skip}`);

const PREFIX = 'tt:';
const BOOT_KEY = `e2b_${'b'.repeat(40)}`;
const NODE_KEY = 'cluster-node-key-for-tests';
let server: TestRedis;
const clients: Redis[] = [];
const gateways: RunningGateway[] = [];
const nodes: StandInNode[] = [];
const keys: Record<string, string> = {};

async function gateway(redisUrl: string): Promise<RunningGateway> {
  const redis = await connectRedis(redisUrl, 'gw');
  clients.push(redis);
  const state = new ClusterState(redis, PREFIX);
  const g = await startGateway({
    state,
    scheduler: new Scheduler({ state, strategy: createStrategy('spread') }),
    keys: new TenantKeys([BOOT_KEY]),
    tenantDefaults: (t) => (t === 'dflt' ? { maxSandboxes: 1 } : {}),
    nodeApiKey: NODE_KEY,
    logger: silentLogger,
    host: '127.0.0.1',
    port: 0,
  });
  gateways.push(g);
  return g;
}

/** A call to replica `r` (0 or 1) with `key` (`body.headers`: extra request headers). */
async function call(
  r: number,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const { headers = {}, ...rest } = (body ?? {}) as { headers?: Record<string, string> };
  if (body !== undefined) body = rest;
  const res = await fetch(`${gateways[r]?.url}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? undefined : JSON.parse(text),
    headers: res.headers,
  };
}

async function newTenant(id: string, quotas: Record<string, number> = {}): Promise<string> {
  const t = await call(0, BOOT_KEY, 'POST', '/admin/tenants', { id, quotas });
  assert.equal(t.status, 201, JSON.stringify(t.body));
  const k = await call(0, BOOT_KEY, 'POST', '/admin/keys', { tenant: id, name: `${id} key` });
  assert.equal(k.status, 201, JSON.stringify(k.body));
  const created = k.body as CreatedApiKey;
  keys[id] = created.key;
  return created.key;
}

async function create(
  r: number,
  key: string,
): Promise<{ status: number; id: string; body: unknown; headers: Headers }> {
  const res = await call(r, key, 'POST', '/sandboxes', { templateID: 'base' });
  return { ...res, id: String((res.body as { sandboxID?: string } | undefined)?.sandboxID) };
}

describe('gateway tenants and API keys', { skip, timeout: 60_000 }, () => {
  before(async () => {
    server = await startRedisServer();
    const redis = await connectRedis(server.url, 'test');
    clients.push(redis);
    nodes.push(
      await startStandInNode('n1', redis, PREFIX),
      await startStandInNode('n2', redis, PREFIX),
    );
    await gateway(server.url);
    await gateway(server.url);
  });
  after(async () => {
    for (const g of gateways) await g.close();
    for (const n of nodes) await n.close();
    for (const c of clients) c.disconnect();
    await server?.close();
  });

  it('manages tenants and keys through the admin API, admin role only', async () => {
    const aKey = await newTenant('alpha', { maxSandboxes: 10 });
    await newTenant('beta');
    const list = await call(1, BOOT_KEY, 'GET', '/admin/tenants');
    assert.deepEqual(
      (list.body as TenantView[]).map((t) => t.id),
      ['alpha', 'beta', 'default'],
    );
    assert.equal((await call(0, BOOT_KEY, 'POST', '/admin/tenants', { id: 'alpha' })).status, 409);
    assert.equal((await call(0, BOOT_KEY, 'POST', '/admin/tenants', { id: 'Bad!' })).status, 400);
    const denied = await call(0, aKey, 'GET', '/admin/tenants');
    assert.equal(denied.status, 403);
    assert.equal((denied.body as { error_code: string }).error_code, 'TENANT_ADMIN_REQUIRED');
    const patched = await call(1, BOOT_KEY, 'PATCH', '/admin/tenants/alpha', {
      quotas: { maxVcpus: 64, maxSandboxes: null },
    });
    assert.deepEqual((patched.body as TenantView).quotas, { maxVcpus: 64 });
    const ks = await call(0, BOOT_KEY, 'GET', '/admin/keys?tenant=alpha');
    assert.equal((ks.body as unknown[]).length, 1);
    assert.equal(JSON.stringify(ks.body).includes(aKey), false, 'a listing never shows the key');
    assert.equal((await call(0, BOOT_KEY, 'GET', '/admin/keys?tenant=nope')).status, 404);
  });

  it('keeps another tenant away from a sandbox on every route', async () => {
    const a = await create(0, keys.alpha ?? '');
    assert.equal(a.status, 201, JSON.stringify(a.body));
    const b = keys.beta ?? '';
    const id = a.id;
    const node = nodes.find((n) => n.sandboxes.has(id));
    assert.ok(node !== undefined);
    const before = node.seen.length;
    for (const [method, path, body] of [
      ['GET', `/sandboxes/${id}`],
      ['DELETE', `/sandboxes/${id}`],
      ['POST', `/sandboxes/${id}/pause`],
      ['POST', `/sandboxes/${id}/connect`, { timeout: 10 }],
      ['POST', `/sandboxes/${id}/fork`, { count: 1 }],
      ['POST', `/sandboxes/${id}/fork`, { count: 2, spread: true }],
      ['POST', `/sandboxes/${id}/timeout`, { timeout: 10 }],
    ] as const) {
      const res = await call(1, b, method, path, body);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal((res.body as { error_code: string }).error_code, 'SBX_NOT_FOUND');
    }
    assert.equal(node.seen.length, before, 'no request of beta reached the node');
    for (const path of ['/sandboxes', '/v2/sandboxes']) {
      const mine = (await call(0, b, 'GET', path)).body as { sandboxID: string }[];
      assert.equal(
        mine.some((s) => s.sandboxID === id),
        false,
        `${path} hides it from beta`,
      );
      const theirs = (await call(1, keys.alpha ?? '', 'GET', path)).body as { sandboxID: string }[];
      assert.ok(
        theirs.some((s) => s.sandboxID === id),
        `${path} shows it to alpha`,
      );
    }
    // The data plane: beta's key is refused like an unknown sandbox, a bad key is 401.
    const data = (key: string) =>
      fetch(`${gateways[1]?.url}/`, {
        headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '49983', 'x-api-key': key },
      });
    assert.equal((await data(b)).status, 502);
    assert.equal((await data('e2b_nosuchkey')).status, 401);
    const ok = await data(keys.alpha ?? '');
    assert.equal(await ok.text(), `data plane of ${id}`);
    const get = await call(0, keys.alpha ?? '', 'GET', `/sandboxes/${id}`);
    assert.equal(get.status, 200);
  });

  it('calls nodes with the cluster key and the caller tenant, never a client-sent tenant', async () => {
    const n0 = nodes.map((n) => n.seen.length);
    const made = await call(0, keys.alpha ?? '', 'POST', '/sandboxes', {
      templateID: 'base',
      headers: { [TENANT_HEADER]: 'beta' },
    });
    assert.equal(made.status, 201);
    const id = (made.body as { sandboxID: string }).sandboxID;
    await call(1, keys.alpha ?? '', 'GET', `/sandboxes/${id}`);
    await call(1, keys.alpha ?? '', 'GET', '/v2/sandboxes');
    await call(0, keys.alpha ?? '', 'DELETE', `/sandboxes/${id}`);
    const seen = nodes.flatMap((n, i) => n.seen.slice(n0[i]));
    assert.ok(seen.length >= 4, `the nodes saw ${seen.length} calls`);
    for (const s of seen) {
      assert.equal(s.headers[TENANT_HEADER], 'alpha', `${s.method} ${s.path}`);
      assert.equal(s.headers['x-api-key'], NODE_KEY, `${s.method} ${s.path}`);
    }
  });

  it('stores keys only hashed in Redis', async () => {
    const redis = clients[0] as Redis;
    const plain = [BOOT_KEY, ...Object.values(keys)];
    let scanned = 0;
    for await (const batch of redis.scanStream({ count: 100 })) {
      for (const k of batch as string[]) {
        scanned++;
        const type = await redis.type(k);
        const values =
          type === 'string'
            ? [await redis.get(k)]
            : type === 'hash'
              ? Object.entries(await redis.hgetall(k)).flat()
              : type === 'set'
                ? await redis.smembers(k)
                : type === 'zset'
                  ? await redis.zrange(k, 0, -1)
                  : [];
        const text = [k, ...values].join('\n');
        for (const p of plain) assert.equal(text.includes(p), false, `key ${k} holds a plain key`);
      }
    }
    assert.ok(scanned > 10, `scanned ${scanned} keys`);
  });

  it('refuses a key revoked through one replica on the other at once', async () => {
    const key = await newTenant('gamma');
    assert.equal((await call(1, key, 'GET', '/v2/sandboxes')).status, 200);
    const login = await fetch(`${gateways[1]?.url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key }),
    });
    assert.equal(login.status, 200, 'the dashboard takes a store key');
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const listed = (await call(0, BOOT_KEY, 'GET', '/admin/keys?tenant=gamma')).body as {
      id: string;
    }[];
    assert.equal((await call(0, BOOT_KEY, 'DELETE', `/admin/keys/${listed[0]?.id}`)).status, 204);
    const after = await call(1, key, 'GET', '/v2/sandboxes');
    assert.equal(after.status, 401);
    await sleep(1500);
    const session = await fetch(`${gateways[1]?.url}/ui/session`, { headers: { cookie } });
    assert.equal(session.status, 401, 'the dashboard session ended');
    const again = (await call(0, BOOT_KEY, 'GET', '/admin/keys?tenant=gamma')).body as {
      revokedAt?: string;
    }[];
    assert.ok(again[0]?.revokedAt !== undefined);
  });

  it('never passes maxSandboxes with concurrent creates through two replicas', async () => {
    const key = await newTenant('quota', { maxSandboxes: 3 });
    for (const n of nodes) n.createDelayMs = 150;
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(i % 2, key)));
    for (const n of nodes) n.createDelayMs = 0;
    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 429);
    assert.equal(ok.length, 3, JSON.stringify(results.map((r) => r.status)));
    assert.equal(refused.length, 7);
    for (const r of refused) {
      assert.equal((r.body as { error_code: string }).error_code, 'TENANT_QUOTA_EXCEEDED');
      assert.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After is sent');
    }
    const view = (await call(1, BOOT_KEY, 'GET', '/admin/tenants/quota')).body as TenantView;
    assert.deepEqual(view.usage, { sandboxes: 3, vcpus: 3, memoryMB: 768 });
    assert.equal((await call(1, key, 'DELETE', `/sandboxes/${ok[0]?.id}`)).status, 204);
    assert.equal((await create(0, key)).status, 201, 'a kill frees its place');
  });

  it('gives a failed create its reservation back', async () => {
    const key = await newTenant('fails', { maxSandboxes: 1 });
    for (const n of nodes) n.failCreates = true;
    assert.equal((await create(0, key)).status, 500);
    for (const n of nodes) n.failCreates = false;
    assert.equal(await clients[0]?.zcard(`${PREFIX}tenant:fails:reserved`), 0);
    assert.equal((await create(1, key)).status, 201);
  });

  it('enforces vCPU, memory, rate and default quotas with Retry-After', async () => {
    const cpu = await newTenant('cpu', { maxVcpus: 2 });
    assert.equal((await create(0, cpu)).status, 201);
    assert.equal((await create(1, cpu)).status, 201);
    const third = await create(0, cpu);
    assert.equal(third.status, 429);
    assert.match((third.body as { message: string }).message, /maxVcpus=2/);
    const mem = await newTenant('mem', { maxMemoryMB: 300 });
    assert.equal((await create(0, mem)).status, 201);
    assert.match(((await create(1, mem)).body as { message: string }).message, /maxMemoryMB=300/);
    const rate = await newTenant('rate', { createsPerSecond: 2 });
    const burst = await Promise.all([create(0, rate), create(1, rate), create(0, rate)]);
    const limited = burst.filter((r) => r.status === 429);
    assert.equal(limited.length, 1, JSON.stringify(burst.map((r) => r.status)));
    assert.equal(limited[0]?.headers.get('retry-after'), '1');
    await sleep(600);
    assert.equal((await create(1, rate)).status, 201, 'the bucket refills');
    const batch = await call(0, rate, 'POST', '/v2/sandboxes', { templateID: 'base', count: 5 });
    assert.equal(batch.status, 429, 'a batch spends one token per sandbox');
    const dflt = await newTenant('dflt');
    assert.equal((await create(0, dflt)).status, 201);
    assert.equal((await create(1, dflt)).status, 429, 'the config default applies');
  });

  it('refuses to delete a tenant that owns sandboxes, then deletes it and its keys', async () => {
    const key = await newTenant('gone');
    const made = await create(0, key);
    const del = await call(1, BOOT_KEY, 'DELETE', '/admin/tenants/gone');
    assert.equal(del.status, 409);
    await call(0, key, 'DELETE', `/sandboxes/${made.id}`);
    assert.equal((await call(1, BOOT_KEY, 'DELETE', '/admin/tenants/gone')).status, 204);
    assert.equal((await call(0, key, 'GET', '/v2/sandboxes')).status, 401);
    assert.equal((await call(0, BOOT_KEY, 'GET', '/admin/tenants/gone')).status, 404);
  });
});
