// client.admin against a STAND-IN node on loopback: the request each method
// sends (method, path, query, body, key) and how answers and errors come
// back. The real node's admin API is exercised by the CLI package's suites
// (packages/cli/test/admin-standin.test.ts).
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import {
  AenvClient,
  ConflictError,
  NotFoundError,
  NotSupportedError,
  PermissionDeniedError,
} from '../src/index.js';
import { startLoopback, type LoopbackServer, type Received } from './loopback-server.js';

const TENANT = {
  id: 'team-b',
  quotas: { maxSandboxes: 2 },
  createdAt: '2026-01-01T00:00:00.000Z',
  usage: { sandboxes: 0, vcpus: 0, memoryMB: 0 },
};
const KEY = {
  id: 'k1',
  tenant: 'team-b',
  name: 'ci',
  role: 'member',
  prefix: 'e2b_12345678',
  createdAt: '2026-01-01T00:00:00.000Z',
};

let server: LoopbackServer | undefined;
after(async () => server?.close());

function reply(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, code: string): void {
  reply(res, status, { code: status, message: `m ${code}`, error_code: code });
}

/** The stand-in's answers, by `METHOD path`. */
function answer(req: Received, res: ServerResponse): void {
  const route = `${req.method} ${req.url}`;
  if (req.headers['x-api-key'] === 'e2b_member') return error(res, 403, 'TENANT_ADMIN_REQUIRED');
  if (route === 'GET /admin/tenants') return reply(res, 200, [TENANT]);
  if (route === 'POST /admin/tenants') {
    const body = JSON.parse(req.body.toString()) as { id: string };
    if (body.id === 'dup') return error(res, 409, 'TENANT_EXISTS');
    return reply(res, 201, { ...TENANT, id: body.id });
  }
  if (route === 'GET /admin/tenants/team-b') return reply(res, 200, TENANT);
  if (route === 'GET /admin/tenants/a%2Fb') return error(res, 404, 'TENANT_NOT_FOUND');
  if (route === 'PATCH /admin/tenants/team-b') return reply(res, 200, { ...TENANT, quotas: {} });
  if (route === 'DELETE /admin/tenants/team-b') return reply(res, 204);
  if (route === 'DELETE /admin/tenants/busy') return error(res, 409, 'TENANT_NOT_EMPTY');
  if (route.startsWith('GET /admin/keys')) return reply(res, 200, [KEY]);
  if (route === 'POST /admin/keys') return reply(res, 201, { ...KEY, key: 'e2b_1234567890' });
  if (route === 'DELETE /admin/keys/k1') return reply(res, 204);
  if (route === 'DELETE /admin/keys/gone') return error(res, 404, 'API_KEY_NOT_FOUND');
  return error(res, 404, 'API_ROUTE_NOT_FOUND');
}

async function client(apiKey = 'e2b_admin'): Promise<{ c: AenvClient; seen: Received[] }> {
  server ??= await startLoopback(answer);
  server.received.length = 0;
  return { c: new AenvClient({ apiUrl: server.url, apiKey, env: {} }), seen: server.received };
}

describe('admin client', () => {
  it('manages tenants with the wire shapes', async () => {
    const { c, seen } = await client();
    assert.deepEqual(await c.admin.tenants.list(), [TENANT]);
    const created = await c.admin.tenants.create({ id: 'team-c', quotas: { maxVcpus: 4 } });
    assert.equal(created.id, 'team-c');
    assert.deepEqual(JSON.parse(seen[1]?.body.toString() ?? ''), {
      id: 'team-c',
      quotas: { maxVcpus: 4 },
    });
    assert.deepEqual(await c.admin.tenants.get('team-b'), TENANT);
    assert.deepEqual(
      (await c.admin.tenants.update('team-b', { maxSandboxes: null, maxVcpus: 0 })).quotas,
      {},
    );
    assert.equal(seen[3]?.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(seen[3]?.body.toString() ?? ''), {
      quotas: { maxSandboxes: null, maxVcpus: 0 },
    });
    await c.admin.tenants.delete('team-b');
    assert.deepEqual(
      seen.map((r) => `${r.method} ${r.url}`),
      [
        'GET /admin/tenants',
        'POST /admin/tenants',
        'GET /admin/tenants/team-b',
        'PATCH /admin/tenants/team-b',
        'DELETE /admin/tenants/team-b',
      ],
    );
    assert.ok(seen.every((r) => r.headers['x-api-key'] === 'e2b_admin'));
  });

  it('manages keys: list by tenant, create, revoke', async () => {
    const { c, seen } = await client();
    assert.deepEqual(await c.admin.keys.list(), [KEY]);
    await c.admin.keys.list({ tenant: 'team-b' });
    const created = await c.admin.keys.create({ tenant: 'team-b', name: 'ci', role: 'member' });
    assert.equal(created.key, 'e2b_1234567890');
    assert.deepEqual(JSON.parse(seen[2]?.body.toString() ?? ''), {
      tenant: 'team-b',
      name: 'ci',
      role: 'member',
    });
    await c.admin.keys.revoke('k1');
    assert.deepEqual(
      seen.map((r) => `${r.method} ${r.url}`),
      [
        'GET /admin/keys',
        'GET /admin/keys?tenant=team-b',
        'POST /admin/keys',
        'DELETE /admin/keys/k1',
      ],
    );
  });

  it('turns error answers into typed errors with their codes', async () => {
    const { c } = await client();
    const coded = (cls: new (...a: never[]) => Error, code: string) => (err: unknown) =>
      err instanceof cls && (err as { code?: string }).code === code;
    await assert.rejects(
      c.admin.tenants.create({ id: 'dup' }),
      coded(ConflictError, 'TENANT_EXISTS'),
    );
    await assert.rejects(c.admin.tenants.get('a/b'), coded(NotFoundError, 'TENANT_NOT_FOUND'));
    await assert.rejects(c.admin.tenants.delete('busy'), coded(ConflictError, 'TENANT_NOT_EMPTY'));
    await assert.rejects(c.admin.keys.revoke('gone'), coded(NotFoundError, 'API_KEY_NOT_FOUND'));
    // A node without tenant support.
    await assert.rejects(
      c.admin.tenants.update('nope', {}),
      (err: unknown) => err instanceof NotSupportedError && /tenants/.test(err.message),
    );
    const member = (await client('e2b_member')).c;
    await assert.rejects(
      member.admin.tenants.list(),
      coded(PermissionDeniedError, 'TENANT_ADMIN_REQUIRED'),
    );
  });
});
