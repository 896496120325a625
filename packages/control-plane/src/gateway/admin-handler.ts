/**
 * The gateway's admin API (`/admin/tenants...`, `/admin/keys...`), with the
 * paths, bodies and answers of `@aenv/shared` `tenant-wire.ts`, over the
 * tenant store in Redis; the route table requires the `admin` role. A
 * tenant's `usage` is computed from the sandbox bindings.
 *
 * @module
 */
import {
  AenvError,
  parseTenantId,
  parseTenantQuotas,
  type ApiKeyRole,
  type TenantQuotas,
  type TenantView,
} from '@aenv/shared';
import type { StoredTenant } from '../tenants/tenant-store.js';
import type { Gateway, RequestContext } from './gateway-context.js';
import { parseJsonObject, readBody, sendJson } from './http-io.js';

function view(t: StoredTenant): TenantView {
  return { id: t.id, quotas: t.quotas, createdAt: t.createdAt };
}

async function body(ctx: RequestContext): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBody(ctx.req));
}

/** `GET /admin/tenants`. */
export async function listTenants(g: Gateway, ctx: RequestContext): Promise<void> {
  sendJson(ctx.res, 200, (await g.tenants.tenants()).map(view));
}

/** `POST /admin/tenants`. */
export async function createTenant(g: Gateway, ctx: RequestContext): Promise<void> {
  const b = await body(ctx);
  const id = parseTenantId(b.id);
  const quotas = parseTenantQuotas(b.quotas) as TenantQuotas;
  sendJson(ctx.res, 201, view(await g.tenants.createTenant(id, quotas)));
}

/** `GET /admin/tenants/{tenantId}`: with its usage. */
export async function getTenant(g: Gateway, ctx: RequestContext): Promise<void> {
  const t = await g.tenants.requireTenant(ctx.params.id ?? '');
  sendJson(ctx.res, 200, { ...view(t), usage: await g.quota.usage(t.id) });
}

/** `PATCH /admin/tenants/{tenantId}`. */
export async function updateTenant(g: Gateway, ctx: RequestContext): Promise<void> {
  const quotas = parseTenantQuotas((await body(ctx)).quotas, true);
  sendJson(ctx.res, 200, view(await g.tenants.updateQuotas(ctx.params.id ?? '', quotas)));
}

/** `DELETE /admin/tenants/{tenantId}`. */
export async function deleteTenant(g: Gateway, ctx: RequestContext): Promise<void> {
  await g.tenants.deleteTenant(ctx.params.id ?? '');
  ctx.res.writeHead(204).end();
}

/** `GET /admin/keys[?tenant=ID]`. */
export async function listKeys(g: Gateway, ctx: RequestContext): Promise<void> {
  const tenant = ctx.url.searchParams.get('tenant');
  if (tenant !== null) await g.tenants.requireTenant(tenant);
  sendJson(ctx.res, 200, await g.tenants.listKeys(tenant ?? undefined));
}

function roleOf(value: unknown): ApiKeyRole {
  if (value === undefined) return 'member';
  if (value === 'admin' || value === 'member') return value;
  throw new AenvError('API_BODY_INVALID', "field 'role': expected 'admin' or 'member'", {
    fields: { field: 'role' },
  });
}

/** `POST /admin/keys`: the answer is the only time the key is shown. */
export async function createKey(g: Gateway, ctx: RequestContext): Promise<void> {
  const b = await body(ctx);
  const tenant = parseTenantId(b.tenant);
  if (b.name !== undefined && typeof b.name !== 'string') {
    throw new AenvError('API_BODY_INVALID', "field 'name': expected a string", {
      fields: { field: 'name' },
    });
  }
  const created = await g.tenants.createKey(tenant, b.name ?? '', roleOf(b.role));
  sendJson(ctx.res, 201, created, { 'cache-control': 'no-store' });
}

/** `DELETE /admin/keys/{keyId}`: revoked at once, on every replica. */
export async function revokeKey(g: Gateway, ctx: RequestContext): Promise<void> {
  await g.tenants.revoke(ctx.params.id ?? '');
  ctx.res.writeHead(204).end();
}
