/**
 * `GET /sandboxes/{id}`: 200 `SandboxDetail`, 404 when unknown.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';
import { toDetailView } from '../sandbox-view.js';

/** The get handler. */
export function getSandbox(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const record = sandboxParam(api, ctx);
    return { status: 200, body: toDetailView(record, api.domain) };
  };
}
