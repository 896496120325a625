/**
 * `POST /sandboxes/{id}/pause` body `{memory?: boolean}`: pauses a running
 * sandbox (memory false keeps only the disk; resume then boots it). 204;
 * 409 when it is not running (the e2b SDK reads 409 as "already paused");
 * 404 when unknown.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import { optionalBoolean } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';

/** The pause handler. */
export function pauseSandbox(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const memory = optionalBoolean(body, 'memory');
    const { id } = sandboxParam(api, ctx);
    await api.orchestrator.pause(id, memory ?? true);
    return { status: 204 };
  };
}
