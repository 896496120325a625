/**
 * `POST /sandboxes/{id}/refreshes` body `{duration?: seconds}`: keeps a
 * running sandbox alive for `duration` more seconds (default 60), never
 * shortening its TTL. 204; 404 when unknown; 409 when not running.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import { optionalInteger } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';

/** The refresh handler. */
export function refreshSandbox(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const duration = optionalInteger(body, 'duration', 0, api.maxTimeoutSeconds) ?? 60;
    const { id } = sandboxParam(api, ctx);
    api.orchestrator.refresh(id, duration);
    return { status: 204 };
  };
}
