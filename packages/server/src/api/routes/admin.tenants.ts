/**
 * The admin API of a node (role `admin` only; the server checks the role):
 * tenants and API keys, in `@aenv/shared`'s `tenant-wire` shapes.
 * - `GET /admin/tenants` → `TenantView[]` (with usage); `POST` → 201
 * - `GET|PATCH|DELETE /admin/tenants/{tenantId}` (DELETE: 409
 *   `TENANT_NOT_EMPTY` while it owns sandboxes; its keys are revoked)
 * - `GET /admin/keys[?tenant=ID]`; `POST /admin/keys` → 201 `CreatedApiKey`
 *   (the only time the key is shown); `DELETE /admin/keys/{keyId}` → 204,
 *   refused from the next request on.
 *
 * @module
 */
import {
  AenvError,
  parseTenantId,
  parseTenantQuotas,
  type TenantQuotas,
  type TenantView,
} from '@aenv/shared';
import type { ApiContext } from '../api-context.js';
import { optionalString } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { ownerOf, principalOf } from '../tenant-access.js';

function withUsage(api: ApiContext, t: TenantView): TenantView {
  return { ...t, usage: api.quotas.usage(t.id) };
}

/** `GET /admin/tenants`. */
export function listTenants(api: ApiContext) {
  return (): Reply => ({
    status: 200,
    body: api.tenants.listTenants().map((t) => withUsage(api, t)),
  });
}

/** `POST /admin/tenants`. */
export function createTenant(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const id = parseTenantId(body.id);
    const quotas = parseTenantQuotas(body.quotas) as TenantQuotas;
    return { status: 201, body: withUsage(api, api.tenants.createTenant(id, quotas)) };
  };
}

/** `GET /admin/tenants/{tenantId}`. */
export function getTenant(api: ApiContext) {
  return (ctx: RouteContext): Reply => ({
    status: 200,
    body: withUsage(api, api.tenants.getTenant(ctx.params.tenantId ?? '')),
  });
}

/** `PATCH /admin/tenants/{tenantId}`. */
export function updateTenant(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    if (body.quotas === undefined) {
      throw new AenvError('API_BODY_INVALID', "field 'quotas' is required", {
        fields: { field: 'quotas' },
      });
    }
    const patch = parseTenantQuotas(body.quotas, true);
    const id = ctx.params.tenantId ?? '';
    return { status: 200, body: withUsage(api, api.tenants.updateTenant(id, patch)) };
  };
}

/** `DELETE /admin/tenants/{tenantId}`. */
export function deleteTenant(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const id = ctx.params.tenantId ?? '';
    api.tenants.getTenant(id);
    if (principalOf(ctx).tenant === id) {
      throw new AenvError('API_BODY_INVALID', `tenant '${id}' is the caller's own tenant`, {
        fields: { tenant: id },
      });
    }
    const owned = api.orchestrator.list().filter((r) => ownerOf(r) === id).length;
    if (owned > 0) {
      throw new AenvError('TENANT_NOT_EMPTY', `tenant '${id}' owns ${owned} sandbox(es)`, {
        fields: { tenant: id },
      });
    }
    api.tenants.deleteTenant(id);
    return { status: 204 };
  };
}

/** `GET /admin/keys[?tenant=ID]`. */
export function listKeys(api: ApiContext) {
  return (ctx: RouteContext): Reply => ({
    status: 200,
    body: api.tenants.listKeys(ctx.query.get('tenant') ?? undefined),
  });
}

/** `POST /admin/keys`. */
export function createKey(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const tenant = parseTenantId(body.tenant);
    const role = optionalString(body, 'role') ?? 'member';
    if (role !== 'admin' && role !== 'member') {
      throw new AenvError('API_BODY_INVALID', "field 'role': expected admin or member", {
        fields: { field: 'role' },
      });
    }
    const name = optionalString(body, 'name');
    return { status: 201, body: api.tenants.createKey({ tenant, name, role }) };
  };
}

/** `DELETE /admin/keys/{keyId}`. */
export function revokeKey(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    api.tenants.revokeKey(ctx.params.keyId ?? '');
    return { status: 204 };
  };
}
