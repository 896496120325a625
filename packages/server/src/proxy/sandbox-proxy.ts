/**
 * The data-plane reverse proxy: forwards a request (or a WebSocket/any
 * upgrade) to a port of a sandbox, streaming both ways without buffering.
 *
 * A sandbox that is unknown, not running or unreachable answers 502 JSON
 * `{code: 502, message, sandboxId}` — what E2B's own proxy answers and what
 * the SDKs read as "sandbox is not running" (a 404 would read as
 * Unimplemented on streams). The API key is never forwarded.
 *
 * @module
 */
import { Agent, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { toHttpError } from '@aenv/shared';
import type { GuestAddress } from '../orchestrator/sandbox.js';
import type { ProxyTarget } from '@aenv/shared';
import type { TrafficAuthorizer } from './traffic-token.js';

/**
 * Resolves a sandbox port to the host address where it is reachable; may
 * take a while (a paused sandbox with auto-resume is resumed first).
 */
export type AddressResolver = (
  sandboxId: string,
  port: number,
) => Promise<GuestAddress | undefined> | GuestAddress | undefined;

/** Most machines with pooled connections at once; the least recently used pool is closed. */
const MAX_AGENTS = 1024;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-api-key',
]);

function forwardHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
  return out;
}

function badGateway(sandboxId: string, message: string): string {
  return JSON.stringify({ code: 502, message, sandboxId, error_code: 'SBX_NOT_FOUND' });
}

/** Forwards data-plane traffic to sandboxes. */
export class SandboxProxy {
  readonly #resolve: AddressResolver;
  readonly #authorize: TrafficAuthorizer;
  /** Keep-alive pools, one per machine (see GuestAddress.machine), oldest first. */
  readonly #agents = new Map<string, Agent>();

  /** `authorize` refuses requests before anything is resolved (see traffic-token.ts). */
  constructor(resolve: AddressResolver, authorize: TrafficAuthorizer = () => undefined) {
    this.#resolve = resolve;
    this.#authorize = authorize;
  }

  /** Forwards one HTTP request. */
  async handle(req: IncomingMessage, res: ServerResponse, target: ProxyTarget): Promise<void> {
    const refused = this.#refusal(req, target);
    if (refused !== undefined) {
      res.writeHead(refused.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(refused.body),
      });
      res.end(refused.body);
      return;
    }
    const addr = await this.#lookup(target);
    if (addr === undefined) {
      return this.#fail(res, target, 'The sandbox was not found');
    }
    const upstream = request({
      host: addr.host,
      port: addr.port,
      method: req.method,
      path: req.url,
      headers: forwardHeaders(req.headers),
      agent: this.#agentFor(addr),
    });
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, forwardHeaders(up.headers));
      res.flushHeaders();
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    upstream.on('error', () => this.#fail(res, target, 'The sandbox is not reachable'));
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  /** Forwards an upgrade (WebSocket or other) as a raw byte stream. */
  async upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    target: ProxyTarget,
  ): Promise<void> {
    const refused = this.#refusal(req, target);
    if (refused !== undefined) {
      socket.end(
        `HTTP/1.1 ${refused.status} Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(refused.body)}\r\nconnection: close\r\n\r\n${refused.body}`,
      );
      return;
    }
    const addr = await this.#lookup(target);
    if (addr === undefined) {
      const body = badGateway(target.sandboxId, 'The sandbox was not found');
      socket.end(
        `HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const upstream: Socket = connect(addr.port, addr.host, () => {
      upstream.write(rawRequestHead(req));
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    const close = (): void => {
      upstream.destroy();
      socket.destroy();
    };
    upstream.on('error', close);
    socket.on('error', close);
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
  }

  /** Closes pooled upstream connections. */
  close(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }

  #agentFor(addr: GuestAddress): Agent {
    const key = addr.machine ?? `${addr.host}:${addr.port}`;
    let agent = this.#agents.get(key);
    if (agent !== undefined) {
      this.#agents.delete(key);
      this.#agents.set(key, agent);
      return agent;
    }
    agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: 60_000 });
    this.#agents.set(key, agent);
    for (const [oldKey, old] of this.#agents) {
      if (this.#agents.size <= MAX_AGENTS) break;
      old.destroy();
      this.#agents.delete(oldKey);
    }
    return agent;
  }

  /** The error answer when `authorize` refuses the request, else undefined. */
  #refusal(
    req: IncomingMessage,
    target: ProxyTarget,
  ): { status: number; body: string } | undefined {
    try {
      this.#authorize(target, req.headers);
      return undefined;
    } catch (err) {
      const { status, body } = toHttpError(err);
      return { status, body: JSON.stringify({ ...body, sandboxId: target.sandboxId }) };
    }
  }

  async #lookup(target: ProxyTarget): Promise<GuestAddress | undefined> {
    try {
      return await this.#resolve(target.sandboxId, target.port);
    } catch {
      return undefined;
    }
  }

  #fail(res: ServerResponse, target: ProxyTarget, message: string): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = badGateway(target.sandboxId, message);
    res.writeHead(502, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  }
}

function rawRequestHead(req: IncomingMessage): string {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (name.toLowerCase() === 'x-api-key') continue;
    lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}
