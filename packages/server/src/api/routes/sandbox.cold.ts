/**
 * `POST /sandboxes-cold` (AgentENV's cold start): a sandbox straight from
 * an OCI image, pulled and converted on a miss. Body `NewColdSandbox`:
 * `image` (required), `cpuCount` (1-64), `memoryMB` (>= 128), `diskSizeMB`
 * (>= 1024, a multiple of 1024; default the image's disk), and what `POST
 * /sandboxes` takes (`timeout`, `autoPause`, `autoResume`, `secure`,
 * `allowInternetAccess` or `allow_internet_access`, `network`,
 * `metadata`, `envVars`). 201 `Sandbox` once envd answers (a boot: seconds
 * more than a create from a template).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { ApiContext } from '../api-context.js';
import { optionalInteger, requiredString } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { actingTenant } from '../tenant-access.js';
import { toSandboxView } from '../sandbox-view.js';
import { parseCreateBody } from './sandbox.create.js';

/** The cold-start handler. */
export function coldStartSandbox(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const image = requiredString(body, 'image');
    const shape = api.defaultShape ?? { vcpus: 2, memoryMiB: 512 };
    const disk = optionalInteger(body, 'diskSizeMB', 1024, 1048576);
    if (disk !== undefined && disk % 1024 !== 0) {
      throw new AenvError(
        'API_BODY_INVALID',
        `field 'diskSizeMB': expected a multiple of 1024, got ${disk}`,
        {
          fields: { field: 'diskSizeMB' },
        },
      );
    }
    const allow = body.allowInternetAccess;
    const { templateId: _image, ...sandbox } = parseCreateBody(
      {
        ...body,
        templateID: image,
        ...(allow === undefined ? {} : { allow_internet_access: allow }),
      },
      'v1',
      api,
    );
    if (api.coldStart === undefined) {
      throw new AenvError(
        'NOT_SUPPORTED',
        'this node cannot cold-start images (it runs without an image service)',
      );
    }
    const coldStart = api.coldStart;
    const tenant = actingTenant(ctx);
    const vcpus = optionalInteger(body, 'cpuCount', 1, 64) ?? shape.vcpus;
    const memoryMiB = optionalInteger(body, 'memoryMB', 128, 262144) ?? shape.memoryMiB;
    const demand = { sandboxes: 1, vcpus, memoryMB: memoryMiB, creates: 1 };
    const record = await api.quotas.run(tenant, demand, () =>
      coldStart({ image, sandbox: { ...sandbox, tenant }, vcpus, memoryMiB, diskSizeMiB: disk }),
    );
    return { status: 201, body: toSandboxView(record, api.domain) };
  };
}
