/**
 * The gateway: one HTTP listener with exactly the node API in front of
 * every node of the cluster. Order of decisions per request: a request
 * naming a sandbox (headers or host) is data plane, passed to its node;
 * `GET /health` and `GET /metrics` answer locally without a key; anything
 * else needs a client key — a bootstrap key of the configuration or one
 * from the tenant store in Redis (`tenants/`) — whose tenant is the
 * request's, and goes through the route table (`gateway-routes.ts`;
 * `/admin/...` needs the `admin` role). Handlers call nodes as that tenant
 * (`x-aenv-tenant` beside the cluster key). Every error is JSON
 * `{code, message, error_code}`.
 *
 * Several gateways may run at once: everything they know lives in Redis.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  AenvError,
  DEFAULT_TENANT,
  LOG_FIELDS,
  TENANT_QUOTA_NAMES,
  type TenantQuotas,
} from '@aenv/shared';
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
import { TenantAuth } from '../tenants/tenant-auth.js';
import { TenantQuotaGate } from '../tenants/tenant-quota.js';
import { TenantStore } from '../tenants/tenant-store.js';
import type { TenantKeys } from './tenant-keys.js';

/** What a gateway runs on. */
export interface GatewayOptions {
  readonly state: ClusterState;
  readonly scheduler: Scheduler;
  /** The bootstrap client keys (role admin). */
  readonly keys: TenantKeys;
  /** Quotas of a tenant that sets none itself (config `tenants.*`). @default none */
  readonly tenantDefaults?: (tenant: string) => TenantQuotas;
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

/** Quotas in force: the tenant's own, each falling back to the default. */
function quotasOf(
  store: TenantStore,
  defaults: ((tenant: string) => TenantQuotas) | undefined,
): (tenant: string) => Promise<TenantQuotas> {
  return async (tenant) => {
    const own: TenantQuotas = (await store.tenant(tenant))?.quotas ?? {};
    const fallback: TenantQuotas = defaults?.(tenant) ?? {};
    const out: Record<string, number> = {};
    for (const name of TENANT_QUOTA_NAMES) {
      const v = (own[name] ?? 0) > 0 ? own[name] : fallback[name];
      if (v !== undefined && v > 0) out[name] = v;
    }
    return out;
  };
}

/** Starts a gateway. */
export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const nodes = new NodeClient({ apiKey: o.nodeApiKey, timeoutMs: o.requestTimeoutMs ?? 600_000 });
  const tenants = new TenantStore(o.state.redis, o.state.prefix);
  for (const t of new Set([DEFAULT_TENANT, ...o.keys.tenants])) await tenants.ensureTenant(t);
  const g: Gateway = {
    state: o.state,
    scheduler: o.scheduler,
    nodes,
    tenants,
    quota: new TenantQuotaGate({
      redis: o.state.redis,
      prefix: o.state.prefix,
      quotasOf: quotasOf(tenants, o.tenantDefaults),
    }),
    logger: o.logger,
    metrics: new GatewayMetrics(),
    domain: o.domain ?? null,
  };
  const auth = new TenantAuth(o.keys, tenants);
  await auth.watch((err) => o.logger.warn('cannot refresh the API keys', errorFields(err)));
  const listening = { url: '' };
  const ui = gatewayDashboard({
    state: o.state,
    auth,
    apiUrl: () => listening.url,
    logger: o.logger,
  });
  const server = createServer({ requestTimeout: 0, headersTimeout: 60_000 });
  server.on('request', (req, res) => {
    if (proxyTargetOf(req.headers, g.domain) === undefined) {
      if (req.method === 'POST' && req.url?.startsWith('/ui/login') === true) {
        // A key made a moment ago (on any replica) logs in at once.
        const login = (): boolean => ui.handler.handle(req, res);
        void auth.refresh().then(login, login);
        return;
      }
      if (ui.handler.handle(req, res)) return;
    }
    void handle(g, auth, req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = proxyTargetOf(req.headers, g.domain);
    if (target === undefined && ui.handler.upgrade(req, socket, head)) return;
    if (target === undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    void proxyUpgrade(g, auth, { req, socket, head }, target);
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
        auth.close();
        server.close(() => resolve());
        server.closeAllConnections();
        nodes.close();
      }),
  };
}

async function handle(
  g: Gateway,
  auth: TenantAuth,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const target = proxyTargetOf(req.headers, g.domain);
  if (target !== undefined) {
    res.on('finish', () => g.metrics.request('data', res.statusCode));
    return proxyRequest(g, auth, { req, res }, target);
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
    const caller = await auth.authenticate(req.headers['x-api-key']);
    const match = matchGatewayRoute(method, url.pathname);
    if (match === undefined) {
      throw new AenvError('API_ROUTE_NOT_FOUND', `no route ${method} ${url.pathname}`);
    }
    if (match.route.admin === true && caller.role !== 'admin') {
      throw new AenvError('TENANT_ADMIN_REQUIRED', `${url.pathname} needs an admin key`);
    }
    const scoped: Gateway = { ...g, nodes: g.nodes.as(caller.tenant) };
    await match.route.handler(scoped, {
      req,
      res,
      url,
      tenant: caller.tenant,
      caller,
      params: match.params,
    });
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
