/**
 * The real daemon (`aenv server`) as a child process that tests may kill
 * with `kill -9`, on one home that survives its restarts: start it (with
 * extra variables such as `AENV_CRASH_POINT`), wait for it to die, call its
 * API, and list what of it is left on the host (QEMU processes, netns,
 * links, nft tables, sandbox directories, NBD sockets, snapshot
 * directories). Used by `daemon-crash.vm.test.ts` and
 * `crash-points.vm.test.ts`.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { commandLines } from './command-lines.js';
import { AENV_MAIN } from './run-aenv.js';

/** A home shared by successive daemons, with a network prefix and pool of its own. */
export interface DaemonHome {
  readonly home: string;
  readonly prefix: string;
  readonly pool: string;
  /** Daemons started on it (killed by {@link removeHome}). */
  readonly children: ChildProcess[];
}

/** One running daemon. */
export interface Daemon {
  readonly child: ChildProcess;
  readonly url: string;
  /** From spawn to "ready" (recovery included), ms. */
  readonly readyMs: number;
  readonly apiKey: string;
}

/** A fresh temporary home; `pool` keeps concurrent suites apart (a /24 of its own). */
export function newDaemonHome(pool: string): DaemonHome {
  const home = mkdtempSync(join(tmpdir(), 'aenv-crash-'));
  return { home, prefix: `c${Math.floor(Math.random() * 1e6)}`, pool, children: [] };
}

/** Kills every daemon still alive and deletes the home. */
export function removeHome(h: DaemonHome): void {
  for (const c of h.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(h.home, { recursive: true, force: true });
}

/** Starts `aenv server` on the home; resolves once it is ready. */
export function startDaemon(h: DaemonHome, env: Record<string, string> = {}): Promise<Daemon> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [AENV_MAIN, 'server', '--home', h.home, '--port', '0'], {
    env: {
      ...process.env,
      AENV_ARTIFACTS_DIR: process.env.AENV_TEST_CACHE ?? '/var/tmp/aenv-test-cache',
      AENV_NETWORK_PREFIX: h.prefix,
      AENV_NETWORK_ADDRESS_POOL: h.pool,
      AENV_NETWORK_POOL_LOW: '1',
      AENV_NETWORK_POOL_HIGH: '2',
      AENV_NETWORK_LOCK_DIR: join(h.home, 'lock'),
      AENV_LOG_LEVEL: process.env.AENV_TEST_LOG_LEVEL ?? 'error',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  h.children.push(child);
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const m = /aenv node ready at (\S+)/.exec(line);
      if (m === null) return;
      const apiKey = readFileSync(join(h.home, 'api-key'), 'utf8').trim();
      resolve({ child, url: m[1] as string, readyMs: Math.round(performance.now() - t0), apiKey });
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`aenv server exited before ready (${String(code ?? signal)})`)),
    );
  });
}

/** Resolves with the signal (or exit code) the daemon ended with. */
export function exitOf(child: ChildProcess): Promise<string> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(String(child.signalCode ?? child.exitCode));
  }
  return new Promise((r) => child.once('exit', (code, signal) => r(String(signal ?? code))));
}

/** Stops a daemon with `signal` and waits for it. */
export async function stopDaemon(d: Daemon, signal: NodeJS.Signals): Promise<void> {
  const done = exitOf(d.child);
  d.child.kill(signal);
  await done;
}

/** An API answer: status and parsed JSON body (undefined when empty). */
export interface Answer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON
  readonly json: any;
}

/** Calls the daemon's API with its key; a dropped connection rejects. */
export async function api(
  d: Daemon,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: { 'x-api-key': d.apiKey, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** QEMU processes started for this home. */
export function vmmProcesses(h: DaemonHome): string[] {
  return commandLines('pgrep', ['-af', 'qemu-system']).filter((l) => l.includes(h.home));
}

/** What sits in `$home/<sub>` (`sandboxes`, `nbd`, `snapshots`). */
export function homeEntries(h: DaemonHome, sub: string): string[] {
  return entries(join(h.home, sub));
}

/** Network namespaces, links and nft tables of this home's prefix. */
export function networkLeftovers(h: DaemonHome): {
  netns: string[];
  links: string[];
  nft: string[];
} {
  return {
    netns: commandLines('ip', ['netns', 'list']).filter((l) => l.startsWith(h.prefix)),
    links: commandLines('ip', ['-o', 'link', 'show']).filter((l) => l.includes(` ${h.prefix}`)),
    nft: commandLines('nft', ['list', 'tables']).filter((l) => l.includes(h.prefix)),
  };
}
