/**
 * A stand-in node for gateway tests: a loopback HTTP server answering the
 * few node API calls the gateway makes for creates, forks, gets, kills,
 * pauses, lists and the data plane, with canned bodies, and recording
 * every request it receives (method, path, headers). It stands in for a
 * real node (which needs machines) where the test is about the gateway;
 * it lists every sandbox it holds whatever the tenant, so the gateway's
 * own filtering is what a test sees. It registers itself in the cluster
 * state as a live node, like a node's heartbeat would.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { clusterKeys, type NodeReport } from '@aenv/shared';
import { syntheticNode } from '../../src/scheduler/synthetic-node.js';

/** One request the stand-in received. */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/** A running stand-in node. */
export interface StandInNode {
  readonly id: string;
  readonly url: string;
  readonly seen: SeenRequest[];
  /** Sandboxes it holds. */
  readonly sandboxes: Set<string>;
  /** How long a create takes. */
  createDelayMs: number;
  /** Creates answer 500 while set. */
  failCreates: boolean;
  close(): Promise<void>;
}

function sandboxJson(id: string): Record<string, unknown> {
  return {
    sandboxID: id,
    templateID: 'base',
    clientID: 'stand-in',
    envdVersion: '0.5.7',
    startedAt: new Date().toISOString(),
    cpuCount: 1,
    memoryMB: 256,
    state: 'running',
  };
}

function newSandboxId(): string {
  return `sbx${randomBytes(8).toString('hex')}`;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

const NOT_FOUND: [number, unknown] = [
  404,
  { code: 404, message: 'not found', error_code: 'SBX_NOT_FOUND' },
];

async function createAnswer(
  n: StandInNode,
  body: Record<string, unknown>,
): Promise<[number, unknown]> {
  await sleep(n.createDelayMs);
  if (n.failCreates) {
    return [500, { code: 500, message: 'stand-in failure', error_code: 'INTERNAL' }];
  }
  const count = typeof body.count === 'number' ? body.count : undefined;
  const ids = Array.from({ length: count ?? 1 }, newSandboxId);
  for (const id of ids) n.sandboxes.add(id);
  return count === undefined
    ? [201, sandboxJson(ids[0] as string)]
    : [201, ids.map((id) => ({ sandbox: sandboxJson(id) }))];
}

function sandboxAnswer(
  n: StandInNode,
  method: string,
  id: string,
  rest: string,
  body: Record<string, unknown>,
): [number, unknown] {
  if (!n.sandboxes.has(id)) return NOT_FOUND;
  if (method === 'DELETE' && rest === '') {
    n.sandboxes.delete(id);
    return [204, undefined];
  }
  if (method === 'POST' && rest === '/fork') {
    const count = typeof body.count === 'number' ? body.count : 1;
    const ids = Array.from({ length: count }, newSandboxId);
    for (const c of ids) n.sandboxes.add(c);
    return [201, ids.map((c) => ({ sandbox: sandboxJson(c) }))];
  }
  if (method === 'GET' && rest === '') return [200, sandboxJson(id)];
  return [204, undefined];
}

/** Answers one control-plane request; returns [status, body]. */
async function answer(
  n: StandInNode,
  method: string,
  path: string,
  body: Record<string, unknown>,
): Promise<[number, unknown]> {
  const list = /^\/(v2\/)?sandboxes$/.test(path);
  if (method === 'POST' && list) return createAnswer(n, body);
  if (method === 'GET' && list) return [200, [...n.sandboxes].map(sandboxJson)];
  const m = /^\/sandboxes\/([^/]+)(\/.*)?$/.exec(path);
  if (m === null) return NOT_FOUND;
  return sandboxAnswer(n, method, m[1] ?? '', m[2] ?? '', body);
}

/** Starts a stand-in node and registers it as live in the cluster state under `prefix`. */
export async function startStandInNode(
  id: string,
  redis: Redis,
  prefix: string,
): Promise<StandInNode> {
  const holder: { server?: ReturnType<typeof createServer> } = {};
  const n: StandInNode = {
    id,
    url: '',
    seen: [],
    sandboxes: new Set(),
    createDelayMs: 0,
    failCreates: false,
    close: () =>
      new Promise<void>((resolve) => {
        server?.close(() => resolve());
        server?.closeAllConnections();
      }),
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    n.seen.push({ method: req.method ?? 'GET', path, headers: req.headers });
    const dataTarget = req.headers['e2b-sandbox-id'];
    if (typeof dataTarget === 'string') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`data plane of ${dataTarget}`);
      return;
    }
    void readJson(req)
      .then((body) => answer(n, req.method ?? 'GET', path, body))
      .then(([status, body]) => {
        if (body === undefined) return void res.writeHead(status).end();
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      })
      .catch(() => res.writeHead(500).end());
  });
  holder.server = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  Object.assign(n, { url });
  const base = syntheticNode(id).report;
  const report: NodeReport = {
    ...base,
    url,
    templates: [{ id: 'base', aliases: ['base'], snapshotId: 's-base', vcpus: 1, memoryMiB: 256 }],
  };
  const keys = clusterKeys(prefix);
  await redis.multi().sadd(keys.nodes, id).set(keys.node(id), JSON.stringify(report)).exec();
  return n;
}
