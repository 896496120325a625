/**
 * `POST /sandboxes/{id}/connect` (v1, `timeout` required) and
 * `POST /v2/sandboxes/{id}/connect` (v2, all optional): a running sandbox
 * gets its TTL extended if the new one reaches further (200 `Sandbox`); a
 * paused one is resumed (201 `Sandbox`). Also `POST /sandboxes/{id}/resume`
 * of the 2.0–2.5 SDKs and the aenv SDK (body `{timeout}`; 409 when not
 * paused), which gives a secure sandbox a new envd access token (its
 * callers read the token from the answer; a connect keeps the token, as
 * the e2b SDK's `sandbox.connect()` does not read it).
 *
 * @module
 */
import type { SandboxRecord } from '../../orchestrator/sandbox.js';
import type { ApiContext } from '../api-context.js';
import { optionalInteger, requiredInteger } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { ownerOf, sandboxParam } from '../tenant-access.js';
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
    // v2's timeout defaults to 300 s (E2B's ConnectSandboxV2); connect never shortens a TTL.
    const seconds = timeout ?? (version === 'v2' ? 300 : undefined);
    const own = sandboxParam(api, ctx);
    // Resuming brings back the vCPUs and memory of a running sandbox: the tenant's quotas.
    const demand = own.state === 'paused' ? resumeDemand(own) : NO_DEMAND;
    const { record, resumed } = await api.quotas.run(ownerOf(own), demand, () =>
      api.orchestrator.connect(own.id, seconds),
    );
    return { status: resumed ? 201 : 200, body: toSandboxView(record, api.domain) };
  };
}

/** The legacy resume handler. */
export function resumeSandbox(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const own = sandboxParam(api, ctx);
    const body = await readJsonBody(ctx.req);
    const timeout = optionalInteger(body, 'timeout', 0, api.maxTimeoutSeconds);
    const record = await api.quotas.run(ownerOf(own), resumeDemand(own), () =>
      api.orchestrator.resume(own.id, timeout, { rotateToken: true }),
    );
    return { status: 201, body: toSandboxView(record, api.domain) };
  };
}

const NO_DEMAND = { sandboxes: 0, vcpus: 0, memoryMB: 0, creates: 0 } as const;

/** What resuming `r` adds to its tenant's use: its machine shape (it already counts as a sandbox). */
function resumeDemand(r: SandboxRecord) {
  return { sandboxes: 0, vcpus: r.vcpus, memoryMB: r.memoryMiB, creates: 0 };
}
