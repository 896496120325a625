/**
 * `DELETE /sandboxes/{id}`: 204 once the machine is gone, 404 when unknown.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';

/** The kill handler. */
export function killSandbox(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    await api.orchestrator.kill(sandboxParam(api, ctx).id);
    return { status: 204 };
  };
}
