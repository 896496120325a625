/**
 * A STAND-IN launcher for API tests: instead of a microVM it starts a small
 * HTTP server on loopback that plays the guest — envd's `/health` and
 * `/init`, a key/value "memory" (`PUT`/`GET /kv/<key>`) that survives a
 * suspend/restore through a `state.json` in the snapshot directory, `/stream`
 * and an upgrade echo for proxy tests. It exists so routes, lifecycle rules,
 * persistence and the proxy can be tested in seconds; the real microVM
 * launcher is exercised by the VM suites.
 *
 * @module
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EgressPolicy } from '@aenv/network';
import {
  loadNodeConfig,
  openNodeState,
  silentLogger,
  startNode,
  type LaunchedSandbox,
  type LaunchSpec,
  type MachineSnapshot,
  type NodeState,
  type RunningNode,
  type SandboxLauncher,
} from '../src/index.js';

/** What the stand-in guest recorded. */
export interface StandInGuest {
  readonly spec: LaunchSpec;
  readonly inits: { body: Record<string, unknown>; token: string | undefined }[];
  readonly egressUpdates: EgressPolicy[];
  readonly kv: Map<string, string>;
  stopped: boolean;
  server: Server;
  /** Simulates the machine dying on its own. */
  crash: () => void;
}

/** Stand-in launcher; `guests` lists every guest started. */
export class StandInLauncher implements SandboxLauncher {
  readonly guests: StandInGuest[] = [];
  /** Delay before the stand-in guest listens (simulates boot). */
  bootDelayMs = 0;
  /** Makes the next suspend fail before the machine is touched. */
  failNextSuspend = false;
  /** How long a suspend takes (to test operations that overlap it). */
  suspendDelayMs = 0;

  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<LaunchedSandbox> {
    const startedAt = performance.now();
    if (this.bootDelayMs > 0) {
      await new Promise((r) => setTimeout(r, this.bootDelayMs));
      signal.throwIfAborted();
    }
    const kv = await loadMemory(spec);
    let exit: (r: { reason: string }) => void = () => undefined;
    const exited = new Promise<{ reason: string }>((r) => (exit = r));
    const guest: StandInGuest = {
      spec,
      inits: [],
      egressUpdates: [],
      kv,
      stopped: false,
      server: createGuestServer(kv),
      crash: () => exit({ reason: 'crashed' }),
    };
    guest.server.on('request', (req, res) => {
      if (req.url !== '/init') return;
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const token = req.headers['x-access-token'];
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(body) as Record<string, unknown>;
        } catch {
          // Fuzzed /init calls come through the proxy: answer as envd would, not crash.
          return void res.writeHead(400).end();
        }
        guest.inits.push({ body: parsed, token: token as string | undefined });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => guest.server.listen(0, '127.0.0.1', r));
    this.guests.push(guest);
    const port = (guest.server.address() as AddressInfo).port;
    const stop = async (): Promise<void> => {
      if (guest.stopped) return;
      guest.stopped = true;
      guest.server.closeAllConnections();
      await new Promise((r) => guest.server.close(r));
    };
    return {
      marks: {
        startedAt,
        vmmRunningAt: performance.now(),
        initStartedAt: Promise.resolve(undefined),
      },
      address: () => ({ host: '127.0.0.1', port }),
      applyEgress: (policy) => {
        guest.egressUpdates.push(policy);
        return Promise.resolve();
      },
      exited,
      checkpoint: async (dir) => {
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, 'state.json'), JSON.stringify([...kv]));
        const image = sourceImage(spec);
        return { dir, image: { virtualSize: image.virtualSize, layers: [...image.layers] } };
      },
      suspend: async (options) => {
        if (this.failNextSuspend) {
          this.failNextSuspend = false;
          throw new Error('stand-in: suspend failed');
        }
        if (this.suspendDelayMs > 0) await new Promise((r) => setTimeout(r, this.suspendDelayMs));
        await mkdir(options.dir, { recursive: true });
        await writeFile(join(options.dir, 'state.json'), JSON.stringify([...kv]));
        await stop();
        const image = sourceImage(spec);
        const sealed = {
          virtualSize: image.virtualSize,
          layers: [...image.layers, `sha256:${'a'.repeat(64)}`],
        };
        return { dir: options.keepMemory ? options.dir : undefined, image: sealed };
      },
      stop,
    };
  }

  close(): Promise<void> {
    for (const g of this.guests) if (!g.stopped) g.server.close();
    return Promise.resolve();
  }
}

function sourceImage(spec: LaunchSpec): MachineSnapshot['image'] {
  return spec.source.kind === 'boot' ? spec.source.image : spec.source.snapshot.image;
}

async function loadMemory(spec: LaunchSpec): Promise<Map<string, string>> {
  const dir = spec.source.kind === 'restore' ? spec.source.snapshot.dir : undefined;
  if (dir === undefined) return new Map();
  const entries = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as [string, string][];
  return new Map(entries);
}

function createGuestServer(kv: Map<string, string>): Server {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/health') return void res.writeHead(204).end();
    if (url === '/metrics') {
      const m = { ts: Math.floor(Date.now() / 1000), cpu_count: 2, cpu_used_pct: 12.5 };
      return void res.end(JSON.stringify({ ...m, mem_total: 512 << 20, mem_used: 100 << 20 }));
    }
    if (url.startsWith('/kv/')) return void handleKv(kv, url.slice(4), req, res);
    if (url === '/stream') {
      // A first chunk at once, the second later: a buffering proxy fails the test.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first\n');
      setTimeout(() => res.end('second\n'), 300);
      return;
    }
    if (url.startsWith('/echo')) {
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-seen-api-key': String(req.headers['x-api-key'] ?? ''),
      });
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => res.end(JSON.stringify({ method: req.method, url, body })));
      return;
    }
    if (url !== '/init') res.writeHead(404).end();
  });
  server.on('upgrade', (_req, socket) => {
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nupgrade: echo\r\nconnection: upgrade\r\n\r\n',
    );
    socket.pipe(socket);
  });
  return server;
}

function handleKv(
  kv: Map<string, string>,
  key: string,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  if (req.method === 'PUT') {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      kv.set(key, body);
      res.writeHead(204).end();
    });
    return;
  }
  const value = kv.get(key);
  if (value === undefined) res.writeHead(404).end();
  else res.writeHead(200).end(value);
}

/** Seeds a node state with a `base` template whose snapshot is an empty stand-in memory. */
export async function seedStandInTemplate(
  state: NodeState,
  vcpus = 2,
  memoryMiB = 512,
): Promise<void> {
  const { id, dir } = state.snapshots.allocate();
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'state.json'), '[]');
  const createdAt = new Date().toISOString();
  state.snapshots.add({
    id,
    kind: 'template',
    templateId: 'base',
    dir,
    image: { virtualSize: 2 ** 31, layers: [`sha256:${'b'.repeat(64)}`] },
    vcpus,
    memoryMiB,
    diskSizeMiB: 2048,
    envdVersion: '0.5.7',
    createdAt,
  });
  state.templates.put({
    id: 'base',
    alias: 'base',
    snapshotId: id,
    vcpus,
    memoryMiB,
    diskSizeMiB: 2048,
    buildKey: 'standin',
    createdAt,
  });
}

/** Starts a node on a stand-in launcher, with a `base` template, in `dir`. */
export async function startStandInNode(
  dir: string,
  standIn: StandInLauncher,
  env: Record<string, string> = {},
): Promise<RunningNode> {
  const config = loadNodeConfig(undefined, { AENV_HOME: dir, AENV_PORT: '0', ...env });
  const state = openNodeState(dir);
  if (state.templates.find('base') === undefined) await seedStandInTemplate(state);
  return startNode({
    config,
    launcher: standIn,
    state,
    envdVersion: '0.5.7',
    logger: silentLogger,
  });
}
