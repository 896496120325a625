/**
 * aenv's streamed template builds (the SDK's `templates.pull`/`build`, the
 * CLI's `aenv pull`/`aenv build`), answered as a progress stream
 * (`progress-stream.ts`): per-layer download and conversion progress and
 * build log lines, then `{"type":"result","template": Template}`.
 *
 * - `POST /templates/pull` `{image, name?, startCmd?, readyCmd?, cpuCount?,
 *   memoryMB?}`: a template of the image (name default: the repository's
 *   last component); a name that exists is rebuilt.
 * - `POST /templates/build`: a Dockerfile. Either JSON `{dockerfile, name?,
 *   cpuCount?, memoryMB?}` (no COPY), or the build context as the body
 *   (`application/x-tar`, gzip or zstd allowed) with `?dockerfile=` (path in
 *   the context, default `Dockerfile`), `&name=`, `&cpuCount=`, `&memoryMB=`.
 *
 * @module
 */
import { posix } from 'node:path';
import { AenvError } from '@aenv/shared';
import { defaultTemplateName, parseImageReference } from '../../image/image-reference.js';
import { openLayerStream } from '../../image/layer-stream.js';
import { readTar, normaliseTarPath } from '../../image/tar-reader.js';
import type { BuildSpec } from '../../template/build-spec.js';
import { parseDockerfile } from '../../template/dockerfile.js';
import type { BuildRequestOptions } from '../../template/template-service.js';
import { recordView } from '../../template/template-view.js';
import type { ApiContext } from '../api-context.js';
import { optionalInteger, optionalString, queryInteger, requiredString } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import { progressReply, type Emit } from '../progress-stream.js';
import type { Reply, RouteContext } from '../router.js';
import { assertTemplateWritable } from '../template-access.js';
import { scopeOf } from '../tenant-access.js';
import { templatesOf } from './template.build.js';

const MAX_DOCKERFILE_BYTES = 1 << 20;

function run(
  api: ApiContext,
  ctx: RouteContext,
  o: BuildRequestOptions & { spec: BuildSpec; context?: string },
  cleanup?: () => Promise<void>,
): Reply {
  const service = templatesOf(api);
  if (o.name !== undefined) assertTemplateWritable(api, ctx, o.name);
  const scope = scopeOf(ctx);
  const existed = o.name !== undefined && api.templates.find(o.name) !== undefined;
  return progressReply(async (emit: Emit) => {
    try {
      let record = await service.runNow(o, {
        onLog: (e) =>
          emit({
            stage: 'build',
            status: 'progress',
            message: e.message,
            ...(e.step === undefined ? {} : { step: e.step }),
          }),
        onProgress: (e) => emit({ ...e }),
      });
      // A tenant's new template is its own (the operator's are public).
      if (!existed && scope !== undefined && record.tenant === undefined) {
        record = { ...record, tenant: scope };
        api.templates.put(record);
      }
      return { template: recordView(record, service.envdVersion, undefined) };
    } finally {
      await cleanup?.();
    }
  });
}

/** `POST /templates/pull`. */
export function pullTemplate(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const body = await readJsonBody(ctx.req);
    const image = requiredString(body, 'image');
    const ref = parseImageReference(image);
    return run(api, ctx, {
      name: optionalString(body, 'name') ?? defaultTemplateName(ref),
      vcpus: optionalInteger(body, 'cpuCount', 1, 64),
      memoryMiB: optionalInteger(body, 'memoryMB', 128, 262144),
      spec: {
        from: { image },
        steps: [],
        startCmd: optionalString(body, 'startCmd'),
        readyCmd: optionalString(body, 'readyCmd'),
      },
    });
  };
}

/** `POST /templates/build`. */
export function buildTemplate(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    if (type === 'application/json' || type === '') {
      const body = await readJsonBody(ctx.req);
      return run(api, ctx, {
        name: optionalString(body, 'name'),
        vcpus: optionalInteger(body, 'cpuCount', 1, 64),
        memoryMiB: optionalInteger(body, 'memoryMB', 128, 262144),
        spec: parseDockerfile(requiredString(body, 'dockerfile')),
      });
    }
    const service = templatesOf(api);
    const context = await service.files.putContext(ctx.req);
    const remove = (): Promise<void> => service.files.remove(context);
    try {
      const q = ctx.query;
      const dockerfile = await readFromArchive(context, q.get('dockerfile') ?? 'Dockerfile');
      const cpu = queryInteger(q, 'cpuCount', 0, { min: 0, max: 64 });
      const mem = queryInteger(q, 'memoryMB', 0, { min: 0, max: 262144 });
      return run(
        api,
        ctx,
        {
          name: q.get('name') ?? undefined,
          vcpus: cpu === 0 ? undefined : cpu,
          memoryMiB: mem === 0 ? undefined : mem,
          spec: parseDockerfile(dockerfile),
          context,
        },
        remove,
      );
    } catch (err) {
      await remove();
      throw err;
    }
  };
}

/** One file of a context archive, as text. */
async function readFromArchive(archive: string, path: string): Promise<string> {
  const want = normaliseTarPath(posix.normalize(path));
  const stream = await openLayerStream(archive);
  try {
    for await (const { entry, body } of readTar(stream.chunks)) {
      if (entry.path !== want || entry.type !== 'file') continue;
      if (entry.size > MAX_DOCKERFILE_BYTES)
        throw new AenvError('BUILD_STEP_INVALID', `${path} is too large for a Dockerfile`);
      const parts: Buffer[] = [];
      for await (const c of body) parts.push(c);
      return Buffer.concat(parts).toString('utf8');
    }
  } finally {
    stream.close();
  }
  throw new AenvError('BUILD_STEP_INVALID', `the build context has no ${path}`, {
    fields: { field: 'dockerfile' },
  });
}
