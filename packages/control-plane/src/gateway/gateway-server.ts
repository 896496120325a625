/**
 * The gateway: one HTTP listener with exactly the node API in front of
 * every node of the cluster. Order of decisions per request: a request
 * naming a sandbox (headers or host) is data plane, passed to its node;
 * `GET /health` and `GET /metrics` answer locally without a key; anything
 * else needs a client key (its tenant is the request's) and goes through
 * the route table (`gateway-routes.ts`). Every error is JSON
 * `{code, message, error_code}`.
 *
 * Several gateways may run at once: everything they know lives in Redis.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ClusterState } from '../state/cluster-state.js';
import { proxyRequest, proxyUpgrade } from './data-plane.js';
import type { Gateway } from './gateway-context.js';
import { gatewayDashboard } from './gateway-dashboard.js';
import { GatewayMetrics } from './gateway-metrics.js';
import { matchGatewayRoute } from './gateway-routes.js';
import { sendError, sendJson } from './http-io.js';
import { NodeClient } from './node-client.js';
import { proxyTargetOf } from '@aenv/shared';
import type { TenantKeys } from './tenant-keys.js';

/** What a gateway runs on. */
export interface GatewayOptions {
  readonly state: ClusterState;
  readonly scheduler: Scheduler;
  readonly keys: TenantKeys;
  /** The key nodes accept (their `cluster.apiKey`). */
  readonly nodeApiKey: string;
  readonly logger: Logger;
  readonly host: string;
  readonly port: number;
  readonly domain?: string | undefined;
  /** Longest buffered call to a node. @default 600 s */
  readonly requestTimeoutMs?: number;
}

/** A listening gateway. */
export interface RunningGateway {
  readonly url: string;
  readonly server: Server;
  readonly metrics: GatewayMetrics;
  close(): Promise<void>;
}

/** Starts a gateway. */
export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const nodes = new NodeClient({ apiKey: o.nodeApiKey, timeoutMs: o.requestTimeoutMs ?? 600_000 });
  const g: Gateway = {
    state: o.state,
    scheduler: o.scheduler,
    nodes,
    logger: o.logger,
    metrics: new GatewayMetrics(),
    domain: o.domain ?? null,
  };
  const listening = { url: '' };
  const ui = gatewayDashboard({
    state: o.state,
    keys: o.keys,
    apiUrl: () => listening.url,
    logger: o.logger,
  });
  const server = createServer({ requestTimeout: 0, headersTimeout: 60_000 });
  server.on('request', (req, res) => {
    if (proxyTargetOf(req.headers, g.domain) === undefined && ui.handler.handle(req, res)) return;
    void handle(g, o.keys, req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = proxyTargetOf(req.headers, g.domain);
    if (target === undefined && ui.handler.upgrade(req, socket, head)) return;
    if (target === undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    void proxyUpgrade(g, req, socket, head, target);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  listening.url = url;
  o.logger.info('gateway listening', { url, strategy: o.scheduler.strategy });
  return {
    url,
    server,
    metrics: g.metrics,
    close: () =>
      new Promise<void>((resolve) => {
        ui.close();
        server.close(() => resolve());
        server.closeAllConnections();
        nodes.close();
      }),
  };
}

async function handle(
  g: Gateway,
  keys: TenantKeys,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const target = proxyTargetOf(req.headers, g.domain);
  if (target !== undefined) {
    res.on('finish', () => g.metrics.request('data', res.statusCode));
    return proxyRequest(g, req, res, target);
  }
  const url = new URL(req.url ?? '/', 'http://gateway');
  const method = req.method ?? 'GET';
  let status = 200;
  try {
    if (method === 'GET' && url.pathname === '/health') return sendJson(res, 200, { status: 'ok' });
    if (method === 'GET' && url.pathname === '/metrics') {
      const text = g.metrics.render();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(text);
      return;
    }
    const tenant = keys.tenantOf(req.headers['x-api-key']);
    const match = matchGatewayRoute(method, url.pathname);
    if (match === undefined) {
      throw new AenvError('API_ROUTE_NOT_FOUND', `no route ${method} ${url.pathname}`);
    }
    await match.route.handler(g, { req, res, url, tenant, params: match.params });
    status = res.statusCode;
  } catch (err) {
    status = sendError(res, err);
    const level = status >= 500 ? 'warn' : 'debug';
    g.logger[level]('request failed', {
      [LOG_FIELDS.httpMethod]: method,
      [LOG_FIELDS.httpPath]: url.pathname,
      [LOG_FIELDS.httpStatus]: status,
      ...errorFields(err),
    });
  }
  g.metrics.request('control', status);
}
