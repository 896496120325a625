/**
 * Fuzzes every route of the node API, the proxy path and the auth header
 * through the real HTTP server, route table and orchestrator (machines are
 * the STAND-IN launcher's loopback guests, see standin-launcher.ts).
 *
 * The routes come from the route table itself, so a new route is fuzzed
 * without touching this file. Each case sends one raw request (method,
 * path, query, headers, body all possibly hostile) and requires:
 * - an answer within 15 s (no hang) and no crash of the process;
 * - a status below 500, except the documented non-4xx answers: 501
 *   `NOT_SUPPORTED` (this node has no image service) and the proxy's 502
 *   `SBX_NOT_FOUND` (E2B's "sandbox not running" answer, what the SDKs read);
 * - every error answer JSON `{code: <status>, message, error_code}`.
 * At the end: no guest runs that no visible sandbox owns, and the process
 * holds no more file descriptors than it did before (give or take a few).
 *
 * The node has no image service, so no case can make it reach a registry.
 * `AENV_FUZZ_ITERATIONS` runs more cases; `AENV_FUZZ_SEED` replays a run.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fuzzIterations, runFuzz, type FuzzRandom, type JsonValue } from '@aenv/shared';
import type { RunningNode } from '../src/index.js';
import type { ApiContext } from '../src/api/api-context.js';
import { routeTable } from '../src/api/route-table.js';
import type { Route } from '../src/api/router.js';
import { StandInLauncher, startStandInNode } from './standin-launcher.js';
import { rawHttp, type RawRequest, type RawResponse } from './support/raw-http.js';

/** Valid bodies per route path, the starting points of mutations. */
const SEED_BODIES: Readonly<Record<string, Record<string, JsonValue>>> = {
  '/sandboxes': {
    templateID: 'base',
    timeout: 30,
    secure: true,
    metadata: { team: 'fuzz' },
    envVars: { A: '1' },
    network: { allowPublicTraffic: false, allowOut: ['10.0.0.0/8'], denyOut: ['0.0.0.0/0'] },
  },
  '/sandboxes/:id/timeout': { timeout: 30 },
  '/sandboxes/:id/network': { allowOut: ['1.1.1.1/32'], denyOut: ['0.0.0.0/0'] },
  '/sandboxes/:id/connect': { timeout: 30 },
  '/sandboxes/:id/fork': { count: 2, timeout: 30, metadata: { k: 'v' } },
  '/sandboxes/:id/snapshots': { name: 'fuzz-snap' },
  '/v3/templates': { alias: 'fuzz', cpuCount: 1, memoryMB: 256 },
  '/v2/templates/:id/builds/:buildID': { fromImage: '127.0.0.1:9/none', steps: [] },
  '/templates/pull': { image: '127.0.0.1:9/none' },
  '/templates/build': { dockerfile: 'FROM 127.0.0.1:9/none' },
  '/sandboxes-cold': { image: '127.0.0.1:9/none' },
};

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'FOO', 'get'];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-16',
  'text/plain',
  'application/octet-stream',
  'multipart/form-data; boundary=x',
  'application/x-tar',
  '',
];

const home = mkdtempSync(join(tmpdir(), 'aenv-api-fuzz-'));
const launcher = new StandInLauncher();
let node: RunningNode;
let port: number;
const liveIds: string[] = [];

/** Percent-encodes any string, lone surrogates too (encodeURIComponent throws on those). */
function pct(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('');
}

function fdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

function send(request: RawRequest): Promise<RawResponse> {
  return rawHttp('127.0.0.1', port, request);
}

async function api(method: string, path: string, body?: unknown): Promise<RawResponse> {
  return send({
    method,
    path,
    headers: [
      ['host', '127.0.0.1'],
      ['x-api-key', node.apiKey],
      ['content-type', 'application/json'],
    ],
    ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
  });
}

async function createSandbox(): Promise<string> {
  const res = await api('POST', '/v2/sandboxes', { templateID: 'base', timeout: 300 });
  assert.equal(res.status, 201, res.body.toString());
  return (JSON.parse(res.body.toString()) as { sandboxID: string }).sandboxID;
}

/** A value for a path parameter: a live id, a plausible one, or garbage. */
function paramValue(rng: FuzzRandom): string {
  const kind = rng.int(0, 5);
  if (kind <= 1 && liveIds.length > 0) return rng.pick(liveIds);
  if (kind === 2) return 'base';
  if (kind === 3) return 'a'.repeat(20);
  return pct(rng.string(40)).replace(/%2F/g, rng.pick(['%2F', '/', '%2f']));
}

function pathOf(rng: FuzzRandom, route: Route): string {
  let path = route.path.replace(/:[A-Za-z]+/g, () => paramValue(rng));
  if (rng.chance(0.1)) path = path.replace(/\//g, rng.pick(['//', '/./', '/%2e/']));
  if (rng.chance(0.1)) path = `${path}/${pct(rng.string(8))}`;
  if (rng.chance(0.4)) {
    const params = Array.from({ length: rng.int(1, 4) }, () => {
      const key = rng.pick(['limit', 'nextToken', 'state', 'metadata', 'start', 'dockerfile']);
      return `${key}=${rng.chance(0.5) ? pct(rng.string()) : rng.string(8).replace(/[\s#]/g, '')}`;
    });
    path += `?${params.join('&')}`;
  }
  return path.replace(/[\r\n ]/g, '');
}

function bodyOf(rng: FuzzRandom, route: Route): Buffer | undefined {
  const seed = SEED_BODIES[route.path.replace(/^\/v2(?=\/sandboxes$)/, '')] ?? {};
  switch (rng.int(0, 8)) {
    case 0:
      return undefined;
    case 6:
      return Buffer.from(JSON.stringify(seed));
    case 1:
      return Buffer.from(JSON.stringify(rng.json(4)));
    case 2:
      return Buffer.from(rng.brokenJson(JSON.stringify(seed)), 'latin1');
    case 3:
      return rng.bytes(rng.int(1, 512));
    default:
      return Buffer.from(JSON.stringify(rng.mutate(seed)));
  }
}

function authHeaders(rng: FuzzRandom): [string, string][] {
  switch (rng.int(0, 14)) {
    case 0:
      return [];
    case 1:
      return [['x-api-key', '']];
    case 2:
      return [['x-api-key', `e2b_${'0'.repeat(40)}`]];
    case 3:
      return [['x-api-key', `${node.apiKey}x`]];
    case 4:
      return [
        ['x-api-key', 'wrong'],
        ['x-api-key', node.apiKey],
      ];
    case 5:
      return [['authorization', `Bearer ${node.apiKey}`]];
    default:
      return [['x-api-key', node.apiKey]];
  }
}

/** Proxy-naming headers, sometimes: a live or unknown sandbox, by header or by host. */
function proxyHeaders(rng: FuzzRandom): [string, string][] {
  const roll = rng.int(0, 10);
  const id = liveIds.length > 0 && rng.chance(0.5) ? rng.pick(liveIds) : rng.string(20);
  const clean = (s: string): string => s.replace(/[\r\n\0]/g, '');
  if (roll === 0) return [['e2b-sandbox-id', clean(id)]];
  if (roll === 1) {
    return [
      ['e2b-sandbox-id', clean(id)],
      ['e2b-sandbox-port', clean(rng.pick(['0', '49983', '65536', '-1', '3000', rng.string(6)]))],
    ];
  }
  if (roll === 2) return [['host', clean(`${rng.int(0, 70000)}-${id}.sbx.test`)]];
  return [];
}

function headersOf(rng: FuzzRandom): [string, string][] {
  const headers: [string, string][] = [];
  const proxy = proxyHeaders(rng);
  if (!proxy.some(([k]) => k === 'host')) headers.push(['host', '127.0.0.1']);
  headers.push(...proxy, ...authHeaders(rng));
  if (rng.chance(0.8)) headers.push(['content-type', rng.pick(CONTENT_TYPES)]);
  if (rng.chance(0.15)) headers.push(['idempotency-key', rng.string(80).replace(/[\r\n\0]/g, '')]);
  if (rng.chance(0.05)) headers.push(['x-junk', 'v'.repeat(rng.int(1, 70_000))]);
  if (rng.chance(0.05)) headers.push(['bad header\u0001', rng.string()]);
  return headers;
}

/** Whether a request names a sandbox, i.e. goes to the proxy. */
function isProxied(request: RawRequest): boolean {
  return request.headers.some(
    ([k, v]) => k === 'e2b-sandbox-id' || (k === 'host' && /^\d+-/.test(v)),
  );
}

/** The JSON error body, or undefined for Node's own empty answers to malformed requests. */
function errorBody(
  what: string,
  res: RawResponse,
  text: string,
): { code?: unknown; message?: unknown; error_code?: unknown } | undefined {
  if (res.headers['content-type']?.startsWith('application/json') !== true) {
    // Node's own parser answers malformed requests with an empty 400/413/431.
    assert.ok(res.status < 500 && text === '', `${what}: a non-JSON error answer: ${text}`);
    return undefined;
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    assert.fail(`${what}: the error answer is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
}

/** Checks one answer against the contract in the module comment. */
function checkAnswer(request: RawRequest, res: RawResponse): void {
  const what = `${request.method} ${request.path.slice(0, 120)} -> ${res.status}`;
  assert.ok(res.status >= 100, `${what}: no HTTP answer (connection closed)`);
  const proxied = isProxied(request);
  // What a guest answers through the proxy is the guest's business, unless it is the proxy's 5xx.
  if (res.status < 400 || (proxied && res.status < 500)) return;
  if (request.method === 'HEAD') {
    assert.ok(res.status < 500 || (proxied && res.status === 502), `${what}: a server error`);
    return;
  }
  const text = res.body.toString('utf8');
  const body = errorBody(what, res, text);
  if (body === undefined) return;
  assert.equal(body.code, res.status, `${what}: body.code differs from the status: ${text}`);
  assert.equal(typeof body.message, 'string', `${what}: no message: ${text}`);
  if (res.status < 500) return;
  const documented =
    (res.status === 501 && body.error_code === 'NOT_SUPPORTED') ||
    (res.status === 502 && proxied && body.error_code === 'SBX_NOT_FOUND');
  assert.ok(documented, `${what}: a server error: ${text}`);
}

/** Kills the sandboxes fuzzed creates and forks made, so the node stays under its capacity. */
async function reap(): Promise<void> {
  const listed = await api('GET', '/sandboxes');
  const ids = (JSON.parse(listed.body.toString()) as { sandboxID: string }[]).map(
    (s) => s.sandboxID,
  );
  for (const id of ids) if (!liveIds.includes(id)) await api('DELETE', `/sandboxes/${id}`);
}

before(async () => {
  node = await startStandInNode(home, launcher);
  port = Number(new URL(node.url).port);
  for (let i = 0; i < 3; i++) liveIds.push(await createSandbox());
});

after(async () => {
  await node.close();
  await launcher.close();
  rmSync(home, { recursive: true, force: true });
});

describe('node API fuzz', () => {
  it('answers every route with 4xx JSON errors, never 5xx, a crash or a hang', async () => {
    const routes = routeTable({} as ApiContext);
    assert.ok(routes.length > 30, 'the route table is read');
    const fdsBefore = fdCount();
    const statuses = new Map<number, number>();
    const result = await runFuzz('node API', { iterations: fuzzIterations(400) }, async (rng) => {
      const route = rng.pick(routes);
      const request: RawRequest = {
        method: rng.chance(0.85) ? route.method : rng.pick(METHODS),
        path: pathOf(rng, route),
        headers: headersOf(rng),
        ...(rng.chance(0.8) ? { body: bodyOf(rng, route) } : {}),
        ...(rng.chance(0.05) ? { contentLength: null } : {}),
      };
      const res = await send(request);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      checkAnswer(request, res);
      // Keep a few sandboxes alive for the id-taking routes.
      if (liveIds.length > 0 && rng.chance(0.02)) liveIds.shift();
      if (liveIds.length < 2) liveIds.push(await createSandbox());
      if (launcher.guests.filter((g) => !g.stopped).length > 24) await reap();
    });
    const seen = [...statuses].sort(([a], [b]) => a - b).map(([k, v]) => `${k}:${v}`);
    console.log(`# node API fuzz: ${result.cases} cases, seed ${result.seed}; ${seen.join(' ')}`);

    const health = await api('GET', '/health');
    assert.equal(health.status, 200, 'the node still answers');
    const listed = await api('GET', '/sandboxes');
    assert.equal(listed.status, 200);
    const visible = new Set(
      (JSON.parse(listed.body.toString()) as { sandboxID: string }[]).map((s) => s.sandboxID),
    );
    const orphans = launcher.guests.filter((g) => !g.stopped && !visible.has(g.spec.sandboxId));
    assert.deepEqual(
      orphans.map((g) => g.spec.sandboxId),
      [],
      'a guest runs that no sandbox owns (a leak)',
    );
    for (const id of visible) assert.equal((await api('DELETE', `/sandboxes/${id}`)).status, 204);
    assert.ok(
      launcher.guests.every((g) => g.stopped),
      'every guest stops with its sandbox',
    );
    await new Promise((r) => setTimeout(r, 200));
    const fdsAfter = fdCount();
    assert.ok(fdsAfter <= fdsBefore + 8, `file descriptors grew from ${fdsBefore} to ${fdsAfter}`);
  });
});
