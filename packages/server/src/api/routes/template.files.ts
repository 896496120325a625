/**
 * E2B's files-hash upload of COPY sources:
 * - `GET /templates/{templateID}/files/{hash}` → 201 `{present}` when the
 *   node has the files, else `{present: false, url, headers}`: where to `PUT`
 *   them (this node; the headers carry the caller's own API key);
 * - `PUT /templates/{templateID}/files/{hash}`, body a tar (gzip or not) of
 *   the files → 204.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import type { Reply, RouteContext } from '../router.js';
import { visibleTemplateId } from '../template-access.js';
import { templatesOf } from './template.build.js';

function baseUrl(ctx: RouteContext): string {
  const proto = ctx.req.headers['x-forwarded-proto'];
  const scheme = typeof proto === 'string' && proto !== '' ? proto.split(',')[0]?.trim() : 'http';
  return `${scheme ?? 'http'}://${ctx.req.headers.host ?? '127.0.0.1'}`;
}

/** `GET /templates/{templateID}/files/{hash}`. */
export function templateFilesLink(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    visibleTemplateId(api, ctx, ctx.params.id ?? '');
    const key = ctx.req.headers['x-api-key'];
    const body = await templatesOf(api).uploadLink(
      ctx.params.id ?? '',
      ctx.params.hash ?? '',
      baseUrl(ctx),
      typeof key === 'string' ? key : '',
    );
    return { status: 201, body };
  };
}

/** `PUT /templates/{templateID}/files/{hash}`. */
export function uploadTemplateFiles(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    visibleTemplateId(api, ctx, ctx.params.id ?? '');
    await templatesOf(api).upload(ctx.params.hash ?? '', ctx.req);
    return { status: 204 };
  };
}
