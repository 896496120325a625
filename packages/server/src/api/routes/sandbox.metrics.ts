/**
 * `GET /sandboxes/{id}/metrics?start=&end=` (unix seconds): the sandbox's
 * resource use over time, sampled from its envd (`SandboxMetric[]`,
 * possibly empty). 404 when unknown.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import { queryInteger } from '../fields.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';

/** The sandbox-metrics handler. */
export function getSandboxMetrics(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const range = { min: 0, max: Number.MAX_SAFE_INTEGER };
    const start = queryInteger(ctx.query, 'start', 0, range);
    const end = queryInteger(ctx.query, 'end', Number.MAX_SAFE_INTEGER, range);
    const { id } = sandboxParam(api, ctx);
    return { status: 200, body: await api.sandboxMetrics.samples(id, start, end) };
  };
}
