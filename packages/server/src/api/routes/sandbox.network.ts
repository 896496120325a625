/**
 * `PUT /sandboxes/{id}/network` body `{allowOut?, denyOut?,
 * allow_internet_access?}`: replaces the egress policy of a running sandbox
 * atomically (absent fields take their defaults, as E2B does). 204; 400
 * naming the bad field; 404 when unknown.
 *
 * @module
 */
import { parseNetworkUpdate } from '@aenv/network';
import type { ApiContext } from '../api-context.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';

/** The network-update handler. */
export function updateSandboxNetwork(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const policy = parseNetworkUpdate(await readJsonBody(ctx.req));
    const { id } = sandboxParam(api, ctx);
    await api.orchestrator.updateEgress(id, policy);
    return { status: 204 };
  };
}
