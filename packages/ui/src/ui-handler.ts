/**
 * The dashboard's HTTP surface, mounted at `/ui` by a node and by a
 * gateway (the same code on both; what differs comes in
 * {@link UiHostOptions}):
 *
 * | request                   | session | what                                                   |
 * | ------------------------- | ------- | ------------------------------------------------------ |
 * | `GET /ui`, `/ui/…` files  | no      | the prebuilt app (`static/`), no data in it            |
 * | `POST /ui/login` `{key}`  | no      | checks the key like `X-API-Key`; sets `aenv_session`    |
 * | `POST /ui/logout`         | no      | ends the session, clears the cookie                    |
 * | `GET /ui/session`         | yes     | `{kind, expiresAt}`: what the app asks first           |
 * | `GET /ui/events`          | yes     | live updates (server-sent events, `events/`)           |
 * | `/ui/api/<path>`          | yes     | the API at `<path>` with the session's key (`api/`)    |
 * | `/ui/terminal/{id}` (WS)  | yes     | a terminal in the sandbox (`terminal/`)                |
 *
 * Without a live session every data route answers 401
 * (`API_UNAUTHENTICATED`) and the app shows its login page. A session is
 * dropped when its key stops being accepted. State-changing requests and
 * terminals must come from the dashboard's own origin (`http/origin-check.ts`).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AenvError, toHttpError } from '@aenv/shared';
import { ApiClient } from './api/api-client.js';
import { forwardToApi } from './api/api-forward.js';
import { serveEventStream } from './events/event-stream.js';
import { readJsonObject, sendError, sendJson, SECURITY_HEADERS } from './http/http-io.js';
import { assertSameOrigin, isSameOrigin } from './http/origin-check.js';
import type { MetricsHistory } from './metrics/metrics-history.js';
import { clearedSessionCookie, isSecure, sessionCookie, sessionIdOf } from './session/cookies.js';
import { SessionStore } from './session/session-store.js';
import { StaticAssets } from './static/static-assets.js';
import { TerminalRelay, terminalSize } from './terminal/terminal-relay.js';

/** The logger the handler reports failures to (the host's). */
export interface UiLogger {
  warn(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

/** What the host (node or gateway) provides. */
export interface UiHostOptions {
  /** What the pages offer: node drain is a gateway operation. */
  readonly kind: 'node' | 'gateway';
  /** Whether an API key is accepted (the host's `X-API-Key` rule). Never throws. */
  readonly checkKey: (key: string) => boolean;
  /** Base URL of the host's own API and data plane (read per call: known once listening). */
  readonly apiUrl: () => string;
  /** The charts' history; absent: the overview shows no charts. */
  readonly history?: MetricsHistory;
  /** The prebuilt app. @default UI_DIST_DIR */
  readonly assetsDir?: string;
  /** @default 12 h */
  readonly sessionTtlMs?: number;
  /** How often live events poll the API. @default 1000 */
  readonly pollIntervalMs?: number;
  readonly logger?: UiLogger;
}

/** The mounted dashboard. */
export interface UiHandler {
  /** Whether the request is the dashboard's (`/ui` or below); if so, it is answered. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Whether the upgrade is the dashboard's terminal; if so, the socket is taken. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Ends live streams and terminals. */
  close(): void;
}

/** Whether a path is the dashboard's. */
export function isUiPath(pathname: string): boolean {
  return pathname === '/ui' || pathname.startsWith('/ui/');
}

/** Creates the dashboard handler of a host. */
export function createUiHandler(o: UiHostOptions): UiHandler {
  const sessions = new SessionStore(o.sessionTtlMs === undefined ? {} : { ttlMs: o.sessionTtlMs });
  const assets = new StaticAssets(o.assetsDir);
  const terminals = new TerminalRelay();
  const streams = new Set<ServerResponse>();
  const ctx: HandlerContext = { o, sessions, assets, terminals, streams };
  return {
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://ui');
      if (!isUiPath(url.pathname)) return false;
      void route(ctx, req, res, url).catch((err: unknown) => {
        const status = sendError(res, err);
        const level = status >= 500 ? 'warn' : 'debug';
        o.logger?.[level]('dashboard request failed', {
          'http.method': req.method,
          'http.path': url.pathname,
          'http.status': status,
          'error.message': err instanceof Error ? err.message : String(err),
        });
      });
      return true;
    },
    upgrade(req, socket, head) {
      const url = new URL(req.url ?? '/', 'http://ui');
      const m = /^\/ui\/terminal\/([^/]+)$/.exec(url.pathname);
      if (!isUiPath(url.pathname)) return false;
      const key = m === null ? undefined : liveKey(ctx, req);
      if (m === null || key === undefined || !isSameOrigin(req)) {
        const status = m === null ? 404 : key === undefined ? 401 : 403;
        socket.end(
          `HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Refused'}\r\n` +
            'content-length: 0\r\nconnection: close\r\n\r\n',
        );
        return true;
      }
      terminals.upgrade(req, socket, head, {
        api: new ApiClient(o.apiUrl, key),
        sandboxId: decodeURIComponent(m[1] ?? ''),
        ...terminalSize(url.searchParams),
      });
      return true;
    },
    close() {
      terminals.close();
      for (const res of streams) res.end();
      streams.clear();
    },
  };
}

interface HandlerContext {
  readonly o: UiHostOptions;
  readonly sessions: SessionStore;
  readonly assets: StaticAssets;
  readonly terminals: TerminalRelay;
  readonly streams: Set<ServerResponse>;
}

/** The key of the request's session while the host still accepts it. */
function liveKey(ctx: HandlerContext, req: IncomingMessage): string | undefined {
  const id = sessionIdOf(req);
  const key = ctx.sessions.keyOf(id);
  if (key === undefined) return undefined;
  if (!ctx.o.checkKey(key)) {
    ctx.sessions.deleteKey(key);
    return undefined;
  }
  return key;
}

function requireKey(ctx: HandlerContext, req: IncomingMessage): string {
  const key = liveKey(ctx, req);
  if (key === undefined) {
    throw new AenvError(
      'API_UNAUTHENTICATED',
      'not logged in to the dashboard (or the session ended)',
    );
  }
  return key;
}

async function route(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? 'GET';
  const path = url.pathname;
  if (path === '/ui') {
    res.writeHead(308, { ...SECURITY_HEADERS, location: `/ui/${url.search}` }).end();
    return;
  }
  if (path.startsWith('/ui/api/')) {
    if (method !== 'GET' && method !== 'HEAD') assertSameOrigin(req);
    const key = requireKey(ctx, req);
    const target = `${path.slice('/ui/api'.length)}${url.search}`;
    return forwardToApi(req, res, { apiUrl: ctx.o.apiUrl(), path: target, key });
  }
  return sessionRoute(ctx, req, res, url);
}

/** The routes below `/ui/` other than the API. */
async function sessionRoute(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? 'GET';
  const path = url.pathname;
  if (method === 'POST' && path === '/ui/login') return login(ctx, req, res);
  if (method === 'POST' && path === '/ui/logout') return logout(ctx, req, res);
  if (method === 'GET' && path === '/ui/session') {
    requireKey(ctx, req);
    const expiresAt = ctx.sessions.expiresAt(sessionIdOf(req) ?? '');
    return sendJson(res, 200, { kind: ctx.o.kind, expiresAt });
  }
  if (method === 'GET' && path === '/ui/events') return events(ctx, req, res);
  if (method === 'GET' || method === 'HEAD') return ctx.assets.serve(req, res, path.slice(4));
  throw new AenvError('API_ROUTE_NOT_FOUND', `no dashboard route ${method} ${path}`);
}

async function login(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse) {
  assertSameOrigin(req);
  const body = await readJsonObject(req);
  const key = typeof body.key === 'string' ? body.key.trim() : '';
  if (key === '' || !ctx.o.checkKey(key)) {
    const { status, body: err } = toHttpError(
      new AenvError('API_UNAUTHENTICATED', key === '' ? 'enter an API key' : 'invalid API key'),
    );
    return sendJson(res, status, err, { 'set-cookie': clearedSessionCookie(isSecure(req)) });
  }
  ctx.sessions.delete(sessionIdOf(req));
  const id = ctx.sessions.create(key);
  const cookie = sessionCookie(id, ctx.sessions.ttlMs, isSecure(req));
  sendJson(
    res,
    200,
    { kind: ctx.o.kind, expiresAt: ctx.sessions.expiresAt(id) },
    { 'set-cookie': cookie },
  );
}

function logout(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse): void {
  assertSameOrigin(req);
  ctx.sessions.delete(sessionIdOf(req));
  res.writeHead(204, { ...SECURITY_HEADERS, 'set-cookie': clearedSessionCookie(isSecure(req)) });
  res.end();
}

function events(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse): void {
  const key = requireKey(ctx, req);
  ctx.streams.add(res);
  serveEventStream(req, res, {
    api: new ApiClient(ctx.o.apiUrl, key),
    hello: { kind: ctx.o.kind, historyIntervalMs: ctx.o.history?.intervalMs ?? null },
    history: ctx.o.history,
    pollIntervalMs: ctx.o.pollIntervalMs ?? 1000,
    onClose: () => ctx.streams.delete(res),
  });
}
