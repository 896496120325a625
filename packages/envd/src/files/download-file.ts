/**
 * `GET /files?path=&username=[&signature=&signature_expiration=]`: streams a
 * file, gzip-compressed when the client accepts it.
 *
 * Errors: 401 bad token, signature or user; 400 a directory or a bad path;
 * 404 missing; 406 no acceptable encoding.
 *
 * @module
 */
import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { AenvError } from '@aenv/shared';
import type { EnvdContext } from '../envd-context.js';
import { fsError } from '../errors.js';
import { headerOf, type Req, type Res } from '../server/http-io.js';
import { chooseEncoding } from './accept-encoding.js';
import { authorizeFileRequest } from './file-signature.js';

/** Serves one download. */
export async function downloadFile(
  ctx: EnvdContext,
  req: Req,
  res: Res,
  query: URLSearchParams,
): Promise<void> {
  authorizeFileRequest(ctx.state, headerOf(req, 'x-access-token'), query, 'read');
  const user = ctx.state.resolveUser(query.get('username') ?? undefined);
  const path = await ctx.paths.resolve(query.get('path') ?? '', user, ctx.state.defaultWorkdir);
  const st = await stat(path).catch((err: unknown) => {
    throw fsError(err, 'stat', path);
  });
  if (st.isDirectory()) {
    throw new AenvError('ENVD_IS_A_DIRECTORY', `path '${path}' is a directory`, {
      fields: { path },
    });
  }
  const encoding = chooseEncoding(headerOf(req, 'accept-encoding'));
  if (encoding === undefined) {
    throw new AenvError(
      'ENVD_ENCODING_UNSUPPORTED',
      'no acceptable content encoding: envd offers gzip and identity',
    );
  }
  const file = createReadStream(path);
  await new Promise<void>((resolve, reject) => {
    file.once('open', () => resolve());
    file.once('error', (err) => reject(fsError(err, 'open', path)));
  });
  const headers: Record<string, string> = {
    'content-type': 'application/octet-stream',
    vary: 'Accept-Encoding',
    'last-modified': st.mtime.toUTCString(),
    ...(encoding === 'gzip'
      ? { 'content-encoding': 'gzip' }
      : { 'content-length': String(st.size) }),
  };
  (res as ServerResponse).writeHead(200, headers);
  if (encoding === 'gzip') await pipeline(file, createGzip(), res);
  else await pipeline(file, res);
}
