/**
 * Reading and deleting templates in E2B's shapes:
 * - `GET /templates` and `GET /v2/templates` → 200 `Template[]` (templates,
 *   then builds that have no template yet, with their `buildStatus`);
 * - `GET /templates/{templateID}` → 200 `TemplateWithBuilds`;
 * - `GET /templates/aliases/{alias}` → 200 `{templateID, public}`;
 * - `DELETE /templates/{templateID}` → 204: a template (its unfinished
 *   builds cancelled) or a snapshot; 404 when unknown.
 * On nodes without an image service the lists show the recorded templates
 * (`template.list.ts`) and delete goes to the orchestrator. A tenant sees
 * public templates and its own (`../template-access.ts`).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { ApiContext } from '../api-context.js';
import type { Reply, RouteContext } from '../router.js';
import { assertTemplateWritable, seesTemplateId, visibleTemplateId } from '../template-access.js';
import { ownedUserSnapshot } from '../tenant-access.js';
import { listTemplates } from './template.list.js';
import { templatesOf } from './template.build.js';

/** `GET /templates`, `GET /v2/templates`. */
export function listTemplateViews(api: ApiContext) {
  const plain = listTemplates(api.templates);
  return (ctx: RouteContext): Reply => {
    const all = api.templateService === undefined ? plain() : api.templateService.list();
    return { status: 200, body: all.filter((t) => seesTemplateId(api, ctx, t.templateID)) };
  };
}

/** `GET /templates/{templateID}`. */
export function getTemplate(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const id = ctx.params.id ?? '';
    visibleTemplateId(api, ctx, id);
    return { status: 200, body: templatesOf(api).get(id) };
  };
}

/** `GET /templates/aliases/{alias}`. */
export function getTemplateAlias(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const alias = ctx.params.alias ?? '';
    visibleTemplateId(api, ctx, alias);
    return { status: 200, body: templatesOf(api).alias(alias) };
  };
}

/** `DELETE /templates/{templateID}`. */
export function deleteTemplate(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const id = ctx.params.id ?? '';
    assertDeletable(api, ctx, id);
    if (api.templateService !== undefined) await api.templateService.delete(id);
    else await api.orchestrator.deleteSnapshotOrTemplate(id);
    return { status: 204 };
  };
}

/**
 * A template the caller may change, or a snapshot it owns; anything else
 * answers as the delete of a missing one would.
 */
export function assertDeletable(api: ApiContext, ctx: RouteContext, id: string): void {
  if (api.templates.find(id) !== undefined) return assertTemplateWritable(api, ctx, id);
  const any = api.orchestrator.listSnapshots().some((s) => s.id === id || s.name === id);
  if (any && ownedUserSnapshot(api, ctx, id) === undefined) {
    throw new AenvError('SNAPSHOT_NOT_FOUND', `snapshot ${id} not found`, {
      fields: { snapshotId: id },
    });
  }
  visibleTemplateId(api, ctx, id);
}
