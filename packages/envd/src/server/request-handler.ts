/**
 * The one request handler of envd: the access-token rule, then either a
 * Connect RPC (`/process.Process/*`, `/filesystem.Filesystem/*`) or a plain
 * HTTP route (`/health`, `/envs`, `/init`, `/files`, `/metrics`).
 *
 * The Connect protocol itself (envelopes, end-stream frames, error bodies,
 * `Connect-Timeout-Ms`, JSON and binary codecs, also gRPC and gRPC-Web) is
 * `@connectrpc/connect-node`'s (see connect-adapter.ts for the one answer
 * envd corrects). envd only treats `Connect-Timeout-Ms: 0` as
 * "no timeout" (the meaning E2B's envd gives it) instead of "already expired".
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { EnvdContext } from '../envd-context.js';
import { downloadFile } from '../files/download-file.js';
import { uploadFiles } from '../files/upload-files.js';
import { filesystemService } from '../filesystem/filesystem-service.js';
import { Filesystem } from '../gen/filesystem/filesystem_pb.js';
import { Process } from '../gen/process/process_pb.js';
import { processService } from '../process/process-service.js';
import {
  headerOf,
  readJson,
  route,
  sendEmpty,
  sendError,
  sendJson,
  type Req,
  type Res,
} from './http-io.js';
import { connectAdapter } from './connect-adapter.js';
import { applyInit, parseInitBody } from './init-route.js';
import { MetricsSampler } from './metrics-route.js';

/** Routes that do not need the access token (`/files` checks it itself, with signatures). */
const OPEN_ROUTES = new Set(['GET /health', 'GET /files', 'POST /files']);

/** A Node request listener (HTTP/1.1 and HTTP/2). */
export type RequestListener = (req: Req, res: Res) => void;

function plainRoutes(ctx: EnvdContext): RequestListener {
  const metrics = new MetricsSampler(ctx.paths.root);
  const log = ctx.logger;
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://envd');
    const key = `${req.method ?? ''} ${url.pathname}`;
    switch (key) {
      case 'GET /health':
        return sendEmpty(res, 204);
      case 'GET /envs':
        return sendJson(res, 200, Object.fromEntries(ctx.state.envVars));
      case 'POST /init':
        return route(res, log, async () => {
          await applyInit(ctx, parseInitBody(await readJson(req)));
          sendEmpty(res, 204, { 'cache-control': 'no-store' });
        });
      case 'GET /files':
        return route(res, log, () => downloadFile(ctx, req, res, url.searchParams));
      case 'POST /files':
        return route(res, log, () => uploadFiles(ctx, req, res, url.searchParams));
      case 'GET /metrics':
        return route(res, log, async () => sendJson(res, 200, await metrics.sample()));
      default:
        return sendError(res, new AenvError('ENVD_ROUTE_NOT_FOUND', `no route for ${key}`), log);
    }
  };
}

/** The request listener of one envd. */
export function createRequestHandler(ctx: EnvdContext): RequestListener {
  const rpc = connectAdapter({
    routes: (router) => {
      router.service(Process, processService(ctx));
      router.service(Filesystem, filesystemService(ctx));
    },
    fallback: plainRoutes(ctx),
    jsonOptions: { ignoreUnknownFields: true },
    binaryOptions: { readUnknownFields: false },
  });
  return (req, res) => {
    if (headerOf(req, 'connect-timeout-ms') === '0') delete req.headers['connect-timeout-ms'];
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (
      !OPEN_ROUTES.has(`${req.method ?? ''} ${path}`) &&
      !ctx.state.tokenMatches(headerOf(req, 'x-access-token'))
    ) {
      const err = new AenvError(
        'ENVD_TOKEN_INVALID',
        'unauthorized access, please provide a valid access token or method signing if supported',
      );
      return sendError(res, err, ctx.logger);
    }
    rpc(req, res);
  };
}
