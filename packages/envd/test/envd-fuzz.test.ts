/**
 * Fuzzes the real envd on loopback (the fixture's world: a temporary root):
 * its plain HTTP routes (`/health`, `/envs`, `/init`, `/files`, `/metrics`,
 * unknown paths) and every Connect RPC of the process and filesystem
 * services (taken from the generated service descriptors, so a new RPC is
 * fuzzed without touching this file) with random and malformed bodies,
 * Connect envelopes, codecs, content types, query strings and tokens.
 *
 * Each case requires an answer's head within 15 s (no hang), a status
 * below 500, and no `internal`/`unknown` Connect error in a stream's end
 * frame. Process starts always run `/bin/true` or `/bin/echo` (the fixture
 * runs commands on this host); `/init` never sets the clock or entropy.
 * At the end envd still serves, no process it started is left running, and
 * this process holds no more file descriptors than before (give or take).
 *
 * `AENV_FUZZ_ITERATIONS` runs more cases; `AENV_FUZZ_SEED` replays a run.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fuzzIterations, runFuzz, type FuzzRandom, type JsonValue } from '@aenv/shared';
import { Filesystem } from '../src/gen/filesystem/filesystem_pb.js';
import { Process } from '../src/gen/process/process_pb.js';
import { callUnary, decodeFrames } from './helpers/connect-wire.js';
import { startFixture, type EnvdFixture } from './helpers/envd-fixture.js';

const TOKEN = 'fuzz-token';

/** Valid messages per RPC, the starting points of mutations. */
const SEED_MESSAGES: Readonly<Record<string, Record<string, JsonValue>>> = {
  Start: { process: { cmd: '/bin/true', args: [], envs: { A: '1' }, cwd: '.' }, stdin: false },
  Connect: { process: { pid: 1 } },
  List: {},
  Update: { process: { pid: 1 }, pty: { size: { cols: 80, rows: 24 } } },
  SendInput: { process: { pid: 1 }, input: { stdin: 'aGk=' } },
  SendSignal: { process: { pid: 1 }, signal: 'SIGNAL_SIGTERM' },
  CloseStdin: { process: { pid: 1 } },
  Stat: { path: 'a.txt' },
  MakeDir: { path: 'd/e' },
  Move: { source: 'a.txt', destination: 'b.txt' },
  ListDir: { path: '.', depth: 2 },
  Remove: { path: 'b.txt' },
  WatchDir: { path: '.', recursive: true },
  CreateWatcher: { path: '.', recursive: false },
  GetWatcherEvents: { watcherId: 'x' },
  RemoveWatcher: { watcherId: 'x' },
};

const RPC_TYPES = [
  'application/json',
  'application/proto',
  'application/connect+json',
  'application/connect+proto',
  'application/grpc-web+proto',
  'application/grpc',
  'text/plain',
  'application/json; charset=latin1',
  '',
];

interface Rpc {
  readonly path: string;
  readonly name: string;
  readonly streaming: boolean;
}

const RPCS: readonly Rpc[] = [Process, Filesystem].flatMap((service) =>
  service.methods.map((m) => ({
    path: `/${service.typeName}/${m.name}`,
    name: m.name,
    streaming: m.methodKind !== 'unary',
  })),
);

let fx: EnvdFixture;

function fdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** A process start may only ever run something harmless. */
function pinCommand(
  rng: FuzzRandom,
  message: Record<string, JsonValue>,
): Record<string, JsonValue> {
  const process = message.process;
  const base =
    typeof process === 'object' && process !== null && !Array.isArray(process) ? process : {};
  return { ...message, process: { ...base, cmd: rng.pick(['/bin/true', '/bin/echo']) } };
}

function envelope(rng: FuzzRandom, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(rng.chance(0.8) ? 0 : rng.int(0, 256), 0);
  const lie = rng.int(0, 6);
  const length = lie === 0 ? 0xffffffff : lie === 1 ? body.length + rng.int(1, 100) : body.length;
  head.writeUInt32BE(length, 1);
  const whole = Buffer.concat([head, body]);
  return rng.chance(0.1) ? whole.subarray(0, rng.int(0, whole.length)) : whole;
}

function rpcBody(rng: FuzzRandom, rpc: Rpc, type: string): Buffer {
  const seed = SEED_MESSAGES[rpc.name] ?? {};
  const pinned = rpc.name === 'Start';
  let message = rng.chance(0.3) ? seed : rng.mutate(seed);
  if (pinned) message = pinCommand(rng, message);
  const roll = rng.int(0, 5);
  let payload: Buffer;
  if (roll === 0 && !pinned) payload = rng.bytes(rng.int(0, 200));
  else if (roll === 1 && !pinned)
    payload = Buffer.from(rng.brokenJson(JSON.stringify(seed)), 'latin1');
  else payload = Buffer.from(JSON.stringify(message));
  const enveloped = /connect\+|grpc/.test(type) || (rpc.streaming && rng.chance(0.5));
  return enveloped ? envelope(rng, payload) : payload;
}

function plainRequest(rng: FuzzRandom): { path: string; method: string; body?: Buffer } {
  const route = rng.pick(['/health', '/envs', '/init', '/files', '/metrics', '/', '/x/../files']);
  const method = rng.chance(0.7)
    ? route === '/init' || route === '/files'
      ? 'POST'
      : 'GET'
    : rng.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']);
  const query = new URLSearchParams();
  for (const key of ['path', 'username', 'signature', 'signature_expiration']) {
    if (rng.chance(0.4))
      query.set(
        key,
        rng.chance(0.5)
          ? rng.string()
          : rng.pick(['a.txt', 'root', 'user', 'v1_abc', '9999999999']),
      );
  }
  const path = `${route}${query.size > 0 ? `?${query.toString()}` : ''}`;
  if (method === 'GET' || method === 'DELETE') return { path, method };
  const init: Record<string, JsonValue> = {
    envVars: { A: 'b' },
    accessToken: '',
    defaultUser: 'user',
    defaultWorkdir: '/',
  };
  let json = rng.mutate(init);
  delete json.timestamp; // never touch this host's clock or RNG
  delete json.entropy;
  // The token is pinned to one of two known values: a random one would lock every later case out.
  json = { ...json, accessToken: rng.pick(['', TOKEN]) };
  const roll = rng.int(0, 4);
  const body =
    roll === 0
      ? rng.bytes(rng.int(0, 300))
      : roll === 1
        ? Buffer.from(rng.brokenJson(JSON.stringify(init)), 'latin1')
        : Buffer.from(JSON.stringify(json));
  return { path, method, body };
}

/** Reads a response for at most `ms` (streams may run on: that is not a hang). */
async function readFor(res: Response, ms: number, abort: AbortController): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    for await (const c of res.body ?? []) chunks.push(Buffer.from(c as Uint8Array));
  } catch {
    // aborted after `ms`: what arrived is enough
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks);
}

function checkStreamEnd(what: string, body: Buffer): void {
  let frames;
  try {
    frames = decodeFrames(body);
  } catch {
    return; // binary frames or a stream cut short by our own abort
  }
  for (const f of frames) {
    if ((f.flags & 2) === 0) continue;
    const code = (f.json.error as { code?: string } | undefined)?.code;
    assert.ok(
      code !== 'internal' && code !== 'unknown',
      `${what}: stream ended with ${JSON.stringify(f.json)}`,
    );
  }
}

async function fuzzCase(rng: FuzzRandom): Promise<number> {
  const headers: Record<string, string> = {};
  const tokenRoll = rng.int(0, 6);
  if (tokenRoll <= 3) headers['x-access-token'] = TOKEN;
  else if (tokenRoll === 4) headers['x-access-token'] = rng.string().replace(/[^\x20-\x7e]/g, '');
  if (rng.chance(0.2))
    headers.authorization = `Basic ${Buffer.from(`${rng.pick(['root', 'user', 'ghost', rng.string(8)])}:`).toString('base64')}`;
  let method = 'POST';
  let path: string;
  let body: Buffer | undefined;
  let streaming = false;
  if (rng.chance(0.35)) {
    const plain = plainRequest(rng);
    ({ method, path, body } = plain);
    if (rng.chance(0.5))
      headers['content-type'] = rng.pick([
        'application/json',
        'application/octet-stream',
        'multipart/form-data; boundary=zz',
        'text/plain',
      ]);
  } else {
    const rpc = rng.pick(RPCS);
    const type = rng.pick(RPC_TYPES);
    headers['content-type'] = type;
    if (rng.chance(0.5)) headers['connect-protocol-version'] = rng.pick(['1', '2', '']);
    if (rng.chance(0.2))
      headers['connect-timeout-ms'] = rng.pick(['0', '10', '-1', 'abc', '99999999999']);
    path = rpc.path;
    streaming = rpc.streaming;
    body = rpcBody(rng, rpc, type);
  }
  const abort = new AbortController();
  const hang = setTimeout(() => abort.abort(), 15_000);
  let res: Response;
  try {
    res = await fetch(`${fx.url}${path}`, { method, headers, body, signal: abort.signal });
  } catch (err) {
    throw new Error(`${method} ${path}: no answer (${String(err)})`);
  } finally {
    clearTimeout(hang);
  }
  const what = `${method} ${path} [${headers['content-type'] ?? ''}] -> ${res.status}`;
  const text = await readFor(res, streaming ? 300 : 10_000, abort);
  assert.ok(res.status < 500, `${what}: ${text.toString('utf8').slice(0, 300)}`);
  if (
    res.status === 200 &&
    res.headers.get('content-type')?.startsWith('application/connect+json') === true
  ) {
    checkStreamEnd(what, text);
  }
  return res.status;
}

/** envd's processes; a fuzzed /init may have set the token, so it is presented. */
async function listProcesses(): Promise<unknown[]> {
  const res = await callUnary(fx.url, 'process.Process/List', {}, { 'x-access-token': TOKEN });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return (res.json.processes as unknown[] | undefined) ?? [];
}

before(async () => {
  fx = await startFixture();
});

after(async () => {
  await fx.close();
});

describe('envd fuzz', () => {
  it('answers malformed HTTP and Connect input with 4xx, never 5xx, a crash or a hang', async () => {
    const fdsBefore = fdCount();
    const statuses = new Map<number, number>();
    const result = await runFuzz('envd', { iterations: fuzzIterations(500) }, async (rng) => {
      const status = await fuzzCase(rng);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
    const seen = [...statuses].sort(([a], [b]) => a - b).map(([k, v]) => `${k}:${v}`);
    console.log(`# envd fuzz: ${result.cases} cases, seed ${result.seed}; ${seen.join(' ')}`);

    const health = await fetch(`${fx.url}/health`);
    assert.equal(health.status, 204, 'envd still answers');
    await new Promise((r) => setTimeout(r, 300));
    const left = await listProcesses();
    assert.deepEqual(left, [], 'no process is left running');
    const fdsAfter = fdCount();
    assert.ok(fdsAfter <= fdsBefore + 8, `file descriptors grew from ${fdsBefore} to ${fdsAfter}`);
  });
});
