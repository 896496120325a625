/**
 * Reading and deleting templates in E2B's shapes:
 * - `GET /templates` and `GET /v2/templates` → 200 `Template[]` (templates,
 *   then builds that have no template yet, with their `buildStatus`);
 * - `GET /templates/{templateID}` → 200 `TemplateWithBuilds`;
 * - `GET /templates/aliases/{alias}` → 200 `{templateID, public}`;
 * - `DELETE /templates/{templateID}` → 204: a template (its unfinished
 *   builds cancelled) or a snapshot; 404 when unknown.
 * On nodes without an image service the lists show the recorded templates
 * (`template.list.ts`) and delete goes to the orchestrator.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import type { Reply, RouteContext } from '../router.js';
import { listTemplates } from './template.list.js';
import { templatesOf } from './template.build.js';

/** `GET /templates`, `GET /v2/templates`. */
export function listTemplateViews(api: ApiContext) {
  const plain = listTemplates(api.templates);
  return (): Reply =>
    api.templateService === undefined ? plain() : { status: 200, body: api.templateService.list() };
}

/** `GET /templates/{templateID}`. */
export function getTemplate(api: ApiContext) {
  return (ctx: RouteContext): Reply => ({
    status: 200,
    body: templatesOf(api).get(ctx.params.id ?? ''),
  });
}

/** `GET /templates/aliases/{alias}`. */
export function getTemplateAlias(api: ApiContext) {
  return (ctx: RouteContext): Reply => ({
    status: 200,
    body: templatesOf(api).alias(ctx.params.alias ?? ''),
  });
}

/** `DELETE /templates/{templateID}`. */
export function deleteTemplate(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const id = ctx.params.id ?? '';
    if (api.templateService !== undefined) await api.templateService.delete(id);
    else await api.orchestrator.deleteSnapshotOrTemplate(id);
    return { status: 204 };
  };
}
