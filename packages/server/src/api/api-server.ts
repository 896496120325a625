/**
 * The node's HTTP listener: one port for the control plane (E2B REST API)
 * and the data plane (the sandbox proxy).
 *
 * Order of decisions for each request: a request naming a sandbox (headers
 * or host, see `proxyTargetOf` in shared) goes to the proxy, whatever its path;
 * otherwise the route table decides, behind the API key except for public
 * routes (the key's principal goes to the handler; admin routes need an
 * admin key: 403 `TENANT_ADMIN_REQUIRED`); unknown routes answer 404 JSON. Every error is JSON
 * `{code, message, error_code}` and is logged with the request.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import { proxyTargetOf } from '@aenv/shared';
import type { SandboxProxy } from '../proxy/sandbox-proxy.js';
import type { ApiKeys, Principal } from './api-keys.js';
import type { IdempotencyCache } from './idempotency.js';
import { sendEmpty, sendError, sendJson } from './http-io.js';
import { matchRoute, type Reply, type Route, type RouteMatch } from './router.js';

/** What the listener needs. */
export interface ApiServerOptions {
  readonly routes: readonly Route[];
  readonly keys: ApiKeys;
  readonly proxy: SandboxProxy;
  readonly domain: string | null;
  readonly logger: Logger;
  readonly idempotency: IdempotencyCache;
  /** The web dashboard at `/ui` (its own login; see `../ui/node-dashboard.ts`). */
  readonly ui?: {
    handle(req: IncomingMessage, res: ServerResponse): boolean;
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  };
}

/** A listening API server. */
export interface ApiServer {
  readonly server: Server;
  /** `http://host:port` */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts listening on `host:port` (port 0 = ephemeral). */
export async function startApiServer(
  options: ApiServerOptions,
  host: string,
  port: number,
): Promise<ApiServer> {
  const server = createServer({ requestTimeout: 0, headersTimeout: 60_000 });
  server.on('request', (req, res) => {
    // The dashboard answers its own paths (`/ui`), never a request naming a sandbox.
    if (proxyTargetOf(req.headers, options.domain) === undefined && options.ui?.handle(req, res)) {
      return;
    }
    void handleRequest(options, req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = proxyTargetOf(req.headers, options.domain);
    if (target === undefined && options.ui?.upgrade(req, socket, head) === true) return;
    if (target === undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    void options.proxy.upgrade(req, socket, head, target);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${shownHost}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handleRequest(
  options: ApiServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const target = proxyTargetOf(req.headers, options.domain);
  if (target !== undefined) return void options.proxy.handle(req, res, target);
  const url = new URL(req.url ?? '/', 'http://node');
  const started = performance.now();
  let status = 500;
  try {
    const match = matchRoute(options.routes, req.method ?? 'GET', url.pathname);
    const principal = authorize(options.keys, match, req);
    if (match === undefined) {
      throw new AenvError('API_ROUTE_NOT_FOUND', `no route ${req.method ?? ''} ${url.pathname}`);
    }
    const ctx = { req, params: match.params, query: url.searchParams, principal };
    const key = req.headers['idempotency-key'];
    const reply =
      match.route.idempotent === true && typeof key === 'string'
        ? // Per tenant: another tenant's replay of the key must not get this answer (tokens).
          await options.idempotency.run(
            `${principal?.tenant ?? '*'}:${key}`,
            `${req.method ?? ''} ${url.pathname}`,
            () => Promise.resolve(match.route.handler(ctx)),
          )
        : await match.route.handler(ctx);
    status = reply.stream === undefined ? writeReply(res, reply) : await writeStream(res, reply);
  } catch (err) {
    status = sendError(res, err);
    const level = status >= 500 ? 'error' : 'debug';
    options.logger[level]('request failed', {
      [LOG_FIELDS.httpMethod]: req.method,
      [LOG_FIELDS.httpPath]: url.pathname,
      [LOG_FIELDS.httpStatus]: status,
      ...errorFields(err),
    });
  }
  options.logger.debug('request', {
    [LOG_FIELDS.httpMethod]: req.method,
    [LOG_FIELDS.httpPath]: url.pathname,
    [LOG_FIELDS.httpStatus]: status,
    [LOG_FIELDS.durationMs]: Math.round(performance.now() - started),
  });
}

/**
 * The principal of a request to `match` (none for public routes; unknown
 * routes need a key too, so they reveal nothing).
 * @throws {AenvError} `API_UNAUTHENTICATED`, `TENANT_ADMIN_REQUIRED`.
 */
function authorize(
  keys: ApiKeys,
  match: RouteMatch | undefined,
  req: IncomingMessage,
): Principal | undefined {
  if (match?.route.public === true) return undefined;
  const principal = keys.authenticate(req.headers);
  if (match?.route.admin === true && principal.role !== 'admin') {
    throw new AenvError('TENANT_ADMIN_REQUIRED', 'this route needs an API key with role admin');
  }
  return principal;
}

/** Writes a streamed reply; a client that goes away stops the writing, not the work. */
async function writeStream(res: ServerResponse, reply: Reply): Promise<number> {
  res.writeHead(reply.status, { ...reply.headers });
  for await (const piece of reply.stream ?? []) {
    if (res.destroyed) continue;
    if (!res.write(piece)) await new Promise((r) => res.once('drain', r).once('close', r));
  }
  res.end();
  return reply.status;
}

function writeReply(res: ServerResponse, reply: Reply): number {
  if (reply.text !== undefined) {
    res.writeHead(reply.status, {
      ...reply.headers,
      'content-length': Buffer.byteLength(reply.text),
    });
    res.end(reply.text);
  } else if (reply.body === undefined) {
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
    sendEmpty(res, reply.status);
  } else {
    sendJson(res, reply.status, reply.body, { ...reply.headers });
  }
  return reply.status;
}
