/**
 * E2B's template build API, what the e2b SDK's `Template.build()` calls:
 * - `POST /v3/templates` `{name, tags?, cpuCount?, memoryMB?}` → 202
 *   `{templateID, buildID, names, aliases, tags, public}`; a name that exists
 *   gets a new build of the same template;
 * - `POST /v2/templates/{templateID}/builds/{buildID}` `TemplateBuildStartV2`
 *   → 202, the build runs in the background;
 * - `GET /templates/{templateID}/builds/{buildID}/status?logsOffset=` → 200
 *   `TemplateBuildInfo` (status, log entries from the offset, the failing
 *   step in `reason`).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import { parseBuildSpec } from '../../template/build-spec.js';
import type { TemplateService } from '../../template/template-service.js';
import type { ApiContext } from '../api-context.js';
import { optionalInteger, optionalString, queryInteger } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { assertTemplateWritable, visibleTemplateId } from '../template-access.js';
import { scopeOf } from '../tenant-access.js';

/** The template service, or `NOT_SUPPORTED` on nodes without one. */
export function templatesOf(api: ApiContext): TemplateService {
  if (api.templateService === undefined) {
    throw new AenvError(
      'NOT_SUPPORTED',
      'this node builds no templates (it runs without an image service)',
    );
  }
  return api.templateService;
}

/** `POST /v3/templates`. */
export function requestTemplateBuild(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const tags = body.tags;
    if (Array.isArray(tags) && tags.length > 0) {
      throw new AenvError('API_BODY_INVALID', 'template tags are not supported', {
        fields: { field: 'tags' },
      });
    }
    const name = optionalString(body, 'name') ?? optionalString(body, 'alias');
    if (name !== undefined) assertTemplateWritable(api, ctx, name);
    const job = templatesOf(api).request({
      name,
      vcpus: optionalInteger(body, 'cpuCount', 1, 64),
      memoryMiB: optionalInteger(body, 'memoryMB', 128, 262144),
    });
    // A tenant's new template is its own (the operator's are public).
    const scope = scopeOf(ctx);
    if (scope !== undefined) api.templates.claim(job.templateId, scope);
    const names = job.alias === undefined ? [] : [job.alias];
    return {
      status: 202,
      body: {
        templateID: job.templateId,
        buildID: job.buildId,
        names,
        aliases: names,
        tags: [],
        public: false,
      },
    };
  };
}

/** `POST /v2/templates/{templateID}/builds/{buildID}`. */
export function startTemplateBuild(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    assertTemplateWritable(api, ctx, ctx.params.id ?? '');
    const spec = parseBuildSpec(await readJsonBody(ctx.req));
    templatesOf(api).start(ctx.params.id ?? '', ctx.params.buildID ?? '', spec);
    return { status: 202 };
  };
}

/** `GET /templates/{templateID}/builds/{buildID}/status`. */
export function templateBuildStatus(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    visibleTemplateId(api, ctx, ctx.params.id ?? '');
    const offset = queryInteger(ctx.query, 'logsOffset', 0, {
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
    });
    return {
      status: 200,
      body: templatesOf(api).status(ctx.params.id ?? '', ctx.params.buildID ?? '', offset),
    };
  };
}
