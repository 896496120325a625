/**
 * A real `redis-server` for tests (Debian's `redis-server` package): its
 * own process with no persistence, listening on a unix socket in a fresh
 * temporary directory (and on a TCP address when asked), removed with its
 * directory on `close()`.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRedis } from '../state/redis-connection.js';

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Also listen on this TCP address (e.g. a test bridge's address). */
  readonly host?: string;
  /** TCP port with `host`. @default 6379 */
  readonly port?: number;
  /** The `redis-server` binary. @default 'redis-server' */
  readonly binary?: string;
}

/** A running test Redis. */
export interface TestRedis {
  /** `unix://<dir>/redis.sock` */
  readonly url: string;
  /** `redis://host:port` when a TCP address was asked for. */
  readonly tcpUrl: string | undefined;
  readonly dir: string;
  readonly pid: number;
  /** Stops it (SIGTERM, then SIGKILL) and removes its directory. */
  close(): Promise<void>;
}

/** Whether `redis-server` can be run here. */
export function redisServerAvailable(binary = 'redis-server'): boolean {
  return ['/usr/bin', '/usr/local/bin', '/usr/sbin'].some((d) => existsSync(join(d, binary)));
}

/** Starts a `redis-server` and waits until it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'aenv-redis-'));
  const socket = join(dir, 'redis.sock');
  const args = [
    '--unixsocket',
    socket,
    '--unixsocketperm',
    '700',
    '--port',
    options.host === undefined ? '0' : String(options.port ?? 6379),
    ...(options.host === undefined ? [] : ['--bind', options.host]),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--protected-mode',
    'no',
    '--loglevel',
    'warning',
  ];
  const child = spawn(options.binary ?? 'redis-server', args, {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `unix://${socket}`;
  try {
    await waitForPing(url, child);
  } catch (err) {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`redis-server did not start: ${(err as Error).message} ${stderr}`, {
      cause: err,
    });
  }
  const tcpUrl =
    options.host === undefined ? undefined : `redis://${options.host}:${options.port ?? 6379}`;
  return {
    url,
    tcpUrl,
    dir,
    pid: child.pid ?? 0,
    close: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPing(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    const client = createRedis(url, 'test-ping');
    try {
      await client.connect();
      await client.ping();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    } finally {
      client.disconnect();
    }
    await sleep(50);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}
