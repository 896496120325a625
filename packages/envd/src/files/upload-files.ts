/**
 * `POST /files?path=&username=[&signature=...]`: uploads, either
 * `application/octet-stream` (one file at `path`) or `multipart/form-data`
 * (parts named `file`; each part's filename is its destination unless `path`
 * is given), optionally `Content-Encoding: gzip`. Answers 200 with
 * `[{path, name, type: "file"}]`.
 *
 * @module
 */
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import busboy from 'busboy';
import { AenvError } from '@aenv/shared';
import type { EnvdContext } from '../envd-context.js';
import { ownerFor } from '../paths/ensure-dirs.js';
import { headerOf, sendJson, type Req, type Res } from '../server/http-io.js';
import type { UserInfo } from '../users/user-db.js';
import { toError } from '../errors.js';
import { authorizeFileRequest } from './file-signature.js';
import { writeFileFrom } from './write-file.js';

/** What the upload answer lists per written file. */
export interface UploadedFile {
  readonly path: string;
  readonly name: string;
  readonly type: 'file';
}

function decodedBody(req: Req): Readable {
  const encoding = (headerOf(req, 'content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return req.pipe(createGunzip());
  if (encoding === 'identity' || encoding === '') return req;
  throw new AenvError('ENVD_UPLOAD_INVALID', `unsupported Content-Encoding: ${encoding}`);
}

interface UploadTarget {
  readonly ctx: EnvdContext;
  readonly user: UserInfo;
  readonly queryPath: string | null;
}

async function resolveTarget(t: UploadTarget, raw: string): Promise<string> {
  return t.ctx.paths.resolve(raw, t.user, t.ctx.state.defaultWorkdir);
}

async function rawUpload(t: UploadTarget, body: Readable): Promise<UploadedFile[]> {
  if (t.queryPath === null) {
    throw new AenvError(
      'ENVD_UPLOAD_INVALID',
      'path query parameter is required for raw body upload',
    );
  }
  const path = await resolveTarget(t, t.queryPath);
  await writeFileFrom(body, path, ownerFor(t.user));
  return [{ path, name: basename(path), type: 'file' }];
}

function multipartUpload(t: UploadTarget, req: Req, body: Readable): Promise<UploadedFile[]> {
  return new Promise((resolve, reject) => {
    const parser = busboy({ headers: req.headers, preservePath: true, defParamCharset: 'utf8' });
    const written: UploadedFile[] = [];
    let chain = Promise.resolve();
    let failed = false;
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      body.unpipe(parser);
      reject(toError(err));
    };
    parser.on('file', (field, stream, info) => {
      if (field !== 'file' || failed) {
        stream.resume();
        return;
      }
      chain = chain.then(async () => {
        const path = await resolveTarget(t, t.queryPath ?? info.filename ?? '');
        if (written.some((f) => f.path === path)) {
          throw new AenvError(
            'ENVD_UPLOAD_INVALID',
            `you cannot upload multiple files to the same path '${path}' in one upload request`,
          );
        }
        await writeFileFrom(stream, path, ownerFor(t.user));
        written.push({ path, name: basename(path), type: 'file' });
      });
      chain.catch((err: unknown) => {
        stream.resume();
        fail(err);
      });
    });
    parser.on('error', (err: Error) =>
      fail(
        new AenvError('ENVD_UPLOAD_INVALID', `error reading form: ${err.message}`, { cause: err }),
      ),
    );
    parser.on('close', () => void chain.then(() => (failed ? undefined : resolve(written)), fail));
    body.on('error', (err) =>
      fail(
        new AenvError('ENVD_UPLOAD_INVALID', `error reading body: ${err.message}`, { cause: err }),
      ),
    );
    body.pipe(parser);
  });
}

/** Serves one upload. */
export async function uploadFiles(
  ctx: EnvdContext,
  req: Req,
  res: Res,
  query: URLSearchParams,
): Promise<void> {
  authorizeFileRequest(ctx.state, headerOf(req, 'x-access-token'), query, 'write');
  const user = ctx.state.resolveUser(query.get('username') ?? undefined);
  const target: UploadTarget = { ctx, user, queryPath: query.get('path') };
  let files: UploadedFile[];
  try {
    files = await receive(target, req);
  } catch (err) {
    // Read and drop the rest of the body, so the client gets to read the error.
    req.unpipe();
    req.resume();
    throw err;
  }
  sendJson(res, 200, files);
}

function receive(target: UploadTarget, req: Req): Promise<UploadedFile[]> {
  const contentType =
    (headerOf(req, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (contentType === 'application/octet-stream') return rawUpload(target, decodedBody(req));
  if (contentType.startsWith('multipart/')) return multipartUpload(target, req, decodedBody(req));
  throw new AenvError(
    'ENVD_UPLOAD_INVALID',
    `unsupported content type: ${contentType || '(none)'}, expected multipart/form-data or application/octet-stream`,
  );
}
