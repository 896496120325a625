/**
 * `POST /sandboxes` (v1, `NewSandbox`) and `POST /v2/sandboxes` (v2,
 * `NewSandboxV2`): create a sandbox, answer 201 `Sandbox` once envd answers.
 * Unknown body fields are ignored, as E2B does.
 *
 * @module
 */
import { parseSandboxNetwork } from '@aenv/network';
import { parseLifecycle } from '../../orchestrator/lifecycle-settings.js';
import type { CreateSandboxRequest } from '../../orchestrator/sandbox.js';
import type { ApiContext } from '../api-context.js';
import { optionalBoolean, optionalInteger, optionalStringMap, requiredString } from '../fields.js';
import type { Reply, RouteContext } from '../router.js';
import { actingTenant, assertUsableSource } from '../tenant-access.js';
import { resolveSource } from '../../orchestrator/sandbox-source.js';
import { readJsonBody } from '../http-io.js';
import { toSandboxView } from '../sandbox-view.js';
import { startResults } from './sandbox.fork.js';

/** Default TTL when the body has none: the v1 spec says 15 s, v2 300 s. */
export const DEFAULT_TIMEOUT_SECONDS = { v1: 15, v2: 300 } as const;

/** Parses a create body into a request. */
export function parseCreateBody(
  body: Readonly<Record<string, unknown>>,
  version: 'v1' | 'v2',
  api: Pick<ApiContext, 'maxTimeoutSeconds' | 'defaultOnTimeout'>,
): CreateSandboxRequest {
  const timeout = optionalInteger(body, 'timeout', 0, api.maxTimeoutSeconds);
  return {
    templateId: requiredString(body, 'templateID'),
    timeoutSeconds: timeout ?? DEFAULT_TIMEOUT_SECONDS[version],
    metadata: optionalStringMap(body, 'metadata') ?? {},
    envVars: optionalStringMap(body, 'envVars') ?? {},
    secure: optionalBoolean(body, 'secure') ?? true,
    network: parseSandboxNetwork(body),
    lifecycle: parseLifecycle(body, api.defaultOnTimeout),
  };
}

/** The create handler for one API version. */
export function createSandbox(api: ApiContext, version: 'v1' | 'v2') {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const tenant = actingTenant(ctx);
    const req = { ...parseCreateBody(body, version, api), tenant };
    assertUsableSource(api, ctx, req.templateId);
    const { snapshot } = resolveSource(api.templates, api.snapshots, req.templateId);
    // aenv extension: `count` creates a batch (one entry per sandbox, as fork answers).
    const count = optionalInteger(body, 'count', 1, 100);
    const n = count ?? 1;
    const demand = {
      sandboxes: n,
      vcpus: n * snapshot.vcpus,
      memoryMB: n * snapshot.memoryMiB,
      creates: n,
    };
    if (count !== undefined) {
      const results = await api.quotas.run(tenant, demand, () =>
        api.orchestrator.createMany(req, count),
      );
      return { status: 201, body: startResults(api, results) };
    }
    const record = await api.quotas.run(tenant, demand, () => api.orchestrator.create(req));
    return { status: 201, body: toSandboxView(record, api.domain) };
  };
}
