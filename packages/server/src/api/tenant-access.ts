/**
 * Who may see what: the ownership rules every route applies.
 *
 * A sandbox or snapshot belongs to one tenant (records from before tenants:
 * `default`). A template built by a tenant is that tenant's; the base
 * template and unowned templates are public (usable and listed by all).
 * A principal without a tenant (the cluster key's operator view) sees
 * everything. Another tenant's resource is answered exactly like a missing
 * one (404 with the same code and message), never 403, so ids reveal
 * nothing.
 *
 * @module
 */
import { AenvError, DEFAULT_TENANT } from '@aenv/shared';
import { notFound } from '../orchestrator/sandbox-helpers.js';
import type { SandboxRecord } from '../orchestrator/sandbox.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { TemplateRecord } from '../template/template-record.js';
import type { ApiContext } from './api-context.js';
import type { Principal } from './api-keys.js';
import type { RouteContext } from './router.js';

/**
 * The request's principal.
 * @throws {AenvError} `API_UNAUTHENTICATED` (a public route asking: a bug, refused safely).
 */
export function principalOf(ctx: RouteContext): Principal {
  if (ctx.principal === undefined) {
    throw new AenvError('API_UNAUTHENTICATED', 'missing API key: send it as X-API-Key');
  }
  return ctx.principal;
}

/** The tenant the request is limited to; `undefined` = all (operator view). */
export function scopeOf(ctx: RouteContext): string | undefined {
  return principalOf(ctx).tenant;
}

/** The tenant that owns what the request creates. */
export function actingTenant(ctx: RouteContext): string {
  return scopeOf(ctx) ?? DEFAULT_TENANT;
}

/** The owner of a sandbox or snapshot. */
export function ownerOf(r: { readonly tenant?: string | undefined }): string {
  return r.tenant ?? DEFAULT_TENANT;
}

/** Whether `scope` may see a sandbox or snapshot. */
export function sees(
  scope: string | undefined,
  r: { readonly tenant?: string | undefined },
): boolean {
  return scope === undefined || ownerOf(r) === scope;
}

/** Whether `scope` may see (and use) a template: public or its own. */
export function seesTemplate(scope: string | undefined, t: TemplateRecord | undefined): boolean {
  return scope === undefined || t?.tenant === undefined || t.tenant === scope;
}

/**
 * The sandbox `id` if the request's tenant owns it.
 * @throws {AenvError} `SBX_NOT_FOUND` (missing or another tenant's: the same answer).
 */
export function ownedSandbox(api: ApiContext, ctx: RouteContext, id: string): SandboxRecord {
  const record = api.orchestrator.get(id);
  if (!sees(scopeOf(ctx), record)) throw notFound(id);
  return record;
}

/** The sandbox named by the `:id` path parameter (see {@link ownedSandbox}). */
export function sandboxParam(api: ApiContext, ctx: RouteContext): SandboxRecord {
  return ownedSandbox(api, ctx, ctx.params.id ?? '');
}

/** A snapshot as a client names it (id or name), if the request's tenant owns it. */
export function ownedUserSnapshot(
  api: ApiContext,
  ctx: RouteContext,
  idOrName: string,
): SnapshotRecord | undefined {
  const scope = scopeOf(ctx);
  return api.orchestrator
    .listSnapshots()
    .find((s) => (s.id === idOrName || s.name === idOrName) && sees(scope, s));
}

/**
 * Checks that the request may start a sandbox from `templateId` (a
 * template, a user snapshot or a cold-start snapshot, as the orchestrator
 * resolves it).
 * @throws {AenvError} `TEMPLATE_NOT_FOUND` (the same answer as for a missing one).
 */
export function assertUsableSource(api: ApiContext, ctx: RouteContext, templateId: string): void {
  const scope = scopeOf(ctx);
  if (scope === undefined) return;
  const template = api.templates.find(templateId);
  if (template !== undefined) {
    if (seesTemplate(scope, template)) return;
    throw noSource(templateId);
  }
  const snapshot = api.snapshots.findUser(templateId) ?? api.snapshots.find(templateId);
  if (snapshot !== undefined && !sees(scope, snapshot)) throw noSource(templateId);
}

/** The orchestrator's answer for a template id it cannot resolve. */
function noSource(templateId: string): AenvError {
  return new AenvError('TEMPLATE_NOT_FOUND', `no template or snapshot '${templateId}'`, {
    fields: { templateId },
  });
}
