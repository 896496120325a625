/**
 * `POST /sandboxes/{id}/fork` body `{count?, timeout?, metadata?}`: one
 * checkpoint of the running sandbox, `count` children (default 1) restored
 * from it at once. 201 with one entry per child, E2B's shape:
 * `[{sandbox: Sandbox} | {error: {code, message}}]` — each child succeeds or
 * fails on its own. 404 when unknown; 409 when not running; 400 for a count
 * above the node's limit.
 *
 * @module
 */
import { toHttpError } from '@aenv/shared';
import type { StartResult } from '../../orchestrator/sandbox-helpers.js';
import type { ApiContext } from '../api-context.js';
import { optionalInteger, optionalStringMap } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { ownerOf, sandboxParam } from '../tenant-access.js';
import { toSandboxView } from '../sandbox-view.js';

/** One entry per child: the sandbox, or the error body it failed with. */
export function startResults(api: ApiContext, results: readonly StartResult[]): unknown[] {
  return results.map((r) =>
    r instanceof Error ? { error: toHttpError(r).body } : { sandbox: toSandboxView(r, api.domain) },
  );
}

/** The fork handler. */
export function forkSandbox(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const parent = sandboxParam(api, ctx);
    const body = await readJsonBody(ctx.req);
    const count = optionalInteger(body, 'count', 1, 100) ?? 1;
    // Children belong to the parent's tenant (the caller's: it must own the parent).
    const demand = {
      sandboxes: count,
      vcpus: count * parent.vcpus,
      memoryMB: count * parent.memoryMiB,
      creates: count,
    };
    const results = await api.quotas.run(ownerOf(parent), demand, () =>
      api.orchestrator.fork(parent.id, {
        count,
        timeoutSeconds: optionalInteger(body, 'timeout', 0, api.maxTimeoutSeconds),
        metadata: optionalStringMap(body, 'metadata'),
      }),
    );
    return { status: 201, body: startResults(api, results) };
  };
}
