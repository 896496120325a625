/**
 * `POST /sandboxes/{id}/connect` (v1, `timeout` required) and
 * `POST /v2/sandboxes/{id}/connect` (v2, all optional): for a running
 * sandbox, extend its TTL if the new one reaches further and answer 200
 * `Sandbox`. (Resuming paused sandboxes, answered 201, comes with pause.)
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import { optionalInteger, requiredInteger } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { toSandboxView } from '../sandbox-view.js';

/** The connect handler for one API version. */
export function connectSandbox(api: ApiContext, version: 'v1' | 'v2') {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const max = api.maxTimeoutSeconds;
    const timeout =
      version === 'v1'
        ? requiredInteger(body, 'timeout', 0, max)
        : optionalInteger(body, 'timeout', 0, max);
    const record = api.orchestrator.connect(
      ctx.params.id ?? '',
      timeout ?? (version === 'v2' ? 300 : undefined),
    );
    return { status: 200, body: toSandboxView(record, api.domain) };
  };
}
