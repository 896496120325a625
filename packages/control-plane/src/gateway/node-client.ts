/**
 * HTTP to the nodes. Control-plane calls carry the cluster's node key
 * instead of the client's and, from a client {@link NodeClient.as} made
 * for a request, the acting tenant in `x-aenv-tenant` (a client's own such
 * header is never passed on); data-plane traffic is passed through as it came
 * (the node's proxy routes it by `E2b-Sandbox-Id` or host). Connections are
 * pooled per node; answers are streamed (no buffering) unless a caller
 * needs the JSON of one (creates, forks: the gateway records bindings).
 *
 * @module
 */
import { Agent, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { AenvError, TENANT_HEADER } from '@aenv/shared';
import { forwardable } from './http-io.js';

/** A buffered answer of a node. */
export interface NodeAnswer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

/** One call to a node. */
export interface NodeCall {
  readonly method: string;
  readonly path: string;
  /** Extra headers (the client's, for forwarded calls). */
  readonly headers?: IncomingMessage['headers'];
  readonly body?: Buffer | undefined;
}

/** `CLUSTER_NODE_UNREACHABLE` for a node. */
export function unreachable(nodeUrl: string, cause: unknown): AenvError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new AenvError('CLUSTER_NODE_UNREACHABLE', `node ${nodeUrl} did not answer: ${why}`, {
    cause,
    fields: { url: nodeUrl },
  });
}

/** Talks to nodes. */
export class NodeClient {
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #tenant: string | undefined;
  readonly #agents: Map<string, Agent>;

  constructor(options: {
    apiKey: string;
    timeoutMs: number;
    tenant?: string | undefined;
    agents?: Map<string, Agent>;
  }) {
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs;
    this.#tenant = options.tenant;
    this.#agents = options.agents ?? new Map<string, Agent>();
  }

  /**
   * A client whose calls carry no tenant (the operator's view, for an
   * admin's template changes; same connection pools; do not close it).
   */
  operator(): NodeClient {
    return new NodeClient({
      apiKey: this.#apiKey,
      timeoutMs: this.#timeoutMs,
      agents: this.#agents,
    });
  }

  /** A client whose control-plane calls act for `tenant` (same connection pools; do not close it). */
  as(tenant: string): NodeClient {
    return new NodeClient({
      apiKey: this.#apiKey,
      timeoutMs: this.#timeoutMs,
      tenant,
      agents: this.#agents,
    });
  }

  /**
   * A control-plane call with a buffered answer.
   * @throws {AenvError} `CLUSTER_NODE_UNREACHABLE`.
   */
  call(nodeUrl: string, c: NodeCall): Promise<NodeAnswer> {
    return new Promise((resolve, reject) => {
      const req = this.#controlRequest(nodeUrl, c);
      req.setTimeout(this.#timeoutMs, () => req.destroy(new Error('timed out')));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', (err) => reject(unreachable(nodeUrl, err)));
      });
      req.on('error', (err) => reject(unreachable(nodeUrl, err)));
      req.end(c.body);
    });
  }

  /** A JSON call; the parsed body of a 2xx answer, else the node's error answer thrown as is. */
  async json(nodeUrl: string, method: string, path: string, body?: unknown): Promise<NodeAnswer> {
    return this.call(nodeUrl, {
      method,
      path,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    });
  }

  /**
   * Forwards a client's control-plane request and streams the answer back;
   * `onChunk` sees the answer's bytes as they pass.
   * @throws {AenvError} `CLUSTER_NODE_UNREACHABLE` when nothing was answered yet.
   */
  forward(
    nodeUrl: string,
    req: IncomingMessage,
    res: ServerResponse,
    o: { body?: Buffer; path?: string; onChunk?: (chunk: Buffer) => void } = {},
  ): Promise<number> {
    return new Promise((resolve, reject) => {
      const up = this.#controlRequest(nodeUrl, {
        method: req.method ?? 'GET',
        path: o.path ?? req.url ?? '/',
        headers: req.headers,
        body: o.body,
      });
      up.on('response', (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
        res.flushHeaders();
        answer.on('data', (d: Buffer) => {
          o.onChunk?.(d);
          res.write(d);
        });
        answer.on('end', () => {
          res.end();
          resolve(answer.statusCode ?? 502);
        });
        answer.on('error', () => res.destroy());
      });
      up.on('error', (err) =>
        res.headersSent ? res.destroy() : reject(unreachable(nodeUrl, err)),
      );
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
      });
      if (o.body !== undefined) up.end(o.body);
      else req.pipe(up);
    });
  }

  /** Passes a data-plane request through unchanged (streams both ways). */
  proxy(nodeUrl: string, req: IncomingMessage, res: ServerResponse, onError: () => void): void {
    const url = new URL(nodeUrl);
    const up = request({
      host: url.hostname,
      port: url.port,
      method: req.method,
      path: req.url,
      headers: forwardable(req.headers, [TENANT_HEADER]),
      agent: this.#agent(url.origin),
    });
    up.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.headers));
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    up.on('error', () => (res.headersSent ? res.destroy() : onError()));
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }

  /** Passes an upgrade (WebSocket or other) through as a raw byte stream. */
  upgrade(nodeUrl: string, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(nodeUrl);
    const up = connect(Number(url.port || 80), url.hostname, () => {
      up.write(rawHead(req));
      if (head.length > 0) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    const close = (): void => {
      up.destroy();
      socket.destroy();
    };
    up.on('error', close);
    socket.on('error', close);
    up.on('close', () => socket.destroy());
    socket.on('close', () => up.destroy());
  }

  /** Closes pooled connections. */
  close(): void {
    for (const a of this.#agents.values()) a.destroy();
    this.#agents.clear();
  }

  #controlRequest(nodeUrl: string, c: NodeCall) {
    const url = new URL(nodeUrl);
    const headers: Record<string, string | string[]> = {
      ...forwardable(c.headers ?? {}, ['host', 'x-api-key', 'content-length', TENANT_HEADER]),
      'x-api-key': this.#apiKey,
    };
    if (this.#tenant !== undefined) headers[TENANT_HEADER] = this.#tenant;
    if (c.body !== undefined) headers['content-length'] = String(c.body.length);
    return request({
      host: url.hostname,
      port: url.port,
      method: c.method,
      path: c.path,
      headers,
      agent: this.#agent(url.origin),
    });
  }

  #agent(origin: string): Agent {
    let a = this.#agents.get(origin);
    if (a === undefined) {
      a = new Agent({ keepAlive: true, maxSockets: 256, timeout: 60_000 });
      this.#agents.set(origin, a);
    }
    return a;
  }
}

function rawHead(req: IncomingMessage): string {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] ?? '';
    if (name.toLowerCase() === TENANT_HEADER) continue;
    lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}
