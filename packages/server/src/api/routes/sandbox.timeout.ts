/**
 * `POST /sandboxes/{id}/timeout` body `{timeout: seconds}`: the new deadline
 * is now + timeout. 204; 404 when unknown.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import { requiredInteger } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';

/** The set-timeout handler. */
export function setSandboxTimeout(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const timeout = requiredInteger(body, 'timeout', 0, api.maxTimeoutSeconds);
    const { id } = sandboxParam(api, ctx);
    api.orchestrator.setTimeout(id, timeout);
    return { status: 204 };
  };
}
