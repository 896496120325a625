/**
 * Who may see and change which template (see `tenant-access.ts` for the
 * rules): a tenant sees public templates and its own; it changes (rebuilds,
 * deletes) its own, and public ones only with an admin key. A template the
 * tenant may not see is answered like a missing one (`TEMPLATE_NOT_FOUND`).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { ApiContext } from './api-context.js';
import { principalOf, scopeOf } from './tenant-access.js';
import type { RouteContext } from './router.js';

/** Whether the request may see the template with this id (public, its own, or any for the operator). */
export function seesTemplateId(api: ApiContext, ctx: RouteContext, id: string): boolean {
  const scope = scopeOf(ctx);
  if (scope === undefined) return true;
  const owner = api.templates.ownerOf(id);
  return owner === undefined || owner === scope;
}

/**
 * The id of the template a client names (id or alias; recorded or being
 * built), checked visible; `undefined` when there is none at all.
 * @throws {AenvError} `TEMPLATE_NOT_FOUND` (another tenant's).
 */
export function visibleTemplateId(
  api: ApiContext,
  ctx: RouteContext,
  idOrAlias: string,
): string | undefined {
  const id = templateIdOf(api, idOrAlias);
  if (id !== undefined && !seesTemplateId(api, ctx, id)) throw templateNotFound(idOrAlias);
  return id;
}

/**
 * Checks that the request may change the template a client names (nothing
 * to check when there is none).
 * @throws {AenvError} `TEMPLATE_NOT_FOUND` (another tenant's),
 *   `TENANT_ADMIN_REQUIRED` (a public template, without an admin key).
 */
export function assertTemplateWritable(
  api: ApiContext,
  ctx: RouteContext,
  idOrAlias: string,
): void {
  const id = visibleTemplateId(api, ctx, idOrAlias);
  if (id === undefined || scopeOf(ctx) === undefined) return;
  if (api.templates.ownerOf(id) === undefined && principalOf(ctx).role !== 'admin') {
    throw new AenvError(
      'TENANT_ADMIN_REQUIRED',
      `template '${idOrAlias}' is public: only an admin key may change it`,
    );
  }
}

/** The id behind an id or alias: a recorded template, or one being built. */
function templateIdOf(api: ApiContext, idOrAlias: string): string | undefined {
  const recorded = api.templates.find(idOrAlias);
  if (recorded !== undefined) return recorded.id;
  const view = api.templateService
    ?.list()
    .find((v) => v.templateID === idOrAlias || v.aliases.includes(idOrAlias));
  return view?.templateID;
}

/** The answer for a template that is missing (or not the caller's). */
export function templateNotFound(id: string): AenvError {
  return new AenvError('TEMPLATE_NOT_FOUND', `template '${id}' not found`, {
    fields: { templateId: id },
  });
}
