/**
 * `NbdHost`: the exports of one thread — for each, an image device, a unix
 * socket listening for NBD clients, and the live connections. `NbdServer`
 * runs one inside a worker thread; it can also run inline (benchmarks).
 *
 * Every export has its own socket, `<socketDir>/<name>.sock`, which answers
 * to the export's name or to the default name `''`. An export outlives its
 * connections: a client that reconnects (QEMU after a VM restore) finds the
 * same device with every acknowledged write. Chunk caches are shared by the
 * exports that name the same cache directory; with `keepCaches` a cache
 * stays open (and warm) after its last export is removed, until the host
 * closes — a node keeps its base image's chunks across sandboxes that way.
 *
 * @module
 */
import { existsSync, unlinkSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { AenvError, Cleanup, LOG_FIELDS } from '@aenv/shared';
import { createBlobStore, type BlobStoreSpec } from '../blob/create-blob-store.js';
import { ChunkCache, type CacheStats } from '../cache/chunk-cache.js';
import {
  ImageDevice,
  type ImageDeviceStats,
  type SealOptions,
  type SealResult,
} from '../image/image-device.js';
import type { ImageSpec } from '../image/image-spec.js';
import { publish, STORAGE_CHANNELS } from '../events.js';
import type { UpperMode } from '../upper/upper.js';
import { NbdConnection } from './nbd-connection.js';
import { newCounters, type NbdExport, type NbdExportCounters } from './nbd-export.js';

/** A JSON-safe description of an export (it crosses into the worker thread). */
export interface ExportSpec {
  readonly image: ImageSpec;
  readonly store: BlobStoreSpec;
  /** The writable upper; without it the export is read-only. */
  readonly upper?: { readonly dir: string; readonly mode?: UpperMode };
  /** A chunk cache for layers in a remote store. */
  readonly cache?: {
    readonly dir: string;
    readonly budgetBytes: number;
    readonly slotSize?: number;
  };
  /** Byte ranges to fetch into the cache in the background once the export is up. */
  readonly prefetch?: readonly { readonly offset: number; readonly length: number }[];
}

/** Counters of one export. */
export interface ExportStats extends NbdExportCounters {
  readonly socketPath: string;
  readonly device: ImageDeviceStats;
  readonly image: Required<ImageSpec>;
}

/** Counters of a host. */
export interface NbdHostStats {
  readonly exports: Readonly<Record<string, ExportStats>>;
  readonly caches: Readonly<Record<string, CacheStats>>;
}

interface LiveExport extends NbdExport {
  readonly provider: ImageDevice;
  readonly socketPath: string;
  readonly server: Server;
  readonly connections: Set<NbdConnection>;
  readonly cleanup: Cleanup;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Options of {@link NbdHost}. */
export interface NbdHostOptions {
  /** Directory for the export sockets (`<name>.sock`). */
  readonly socketDir: string;
  /**
   * Keep each chunk cache open once opened, until `close()`, instead of
   * closing it with its last export (a cache starts empty when opened).
   * @default false
   */
  readonly keepCaches?: boolean;
}

/** The exports of one thread. */
export class NbdHost {
  readonly #socketDir: string;
  readonly #keepCaches: boolean;
  readonly #exports = new Map<string, LiveExport>();
  readonly #caches = new Map<string, { cache: ChunkCache; users: number }>();
  #closed = false;

  constructor(options: NbdHostOptions) {
    this.#socketDir = options.socketDir;
    this.#keepCaches = options.keepCaches ?? false;
  }

  /**
   * Opens the image and starts serving it.
   * @returns the unix socket path clients connect to.
   * @throws {AenvError} `NBD_EXPORT_EXISTS`, `INVALID_ARGUMENT`, and whatever opening the image throws.
   */
  async addExport(name: string, spec: ExportSpec): Promise<string> {
    this.#assertOpen();
    if (!NAME.test(name))
      throw new AenvError('INVALID_ARGUMENT', `bad export name ${JSON.stringify(name)}`);
    if (this.#exports.has(name)) {
      throw new AenvError('NBD_EXPORT_EXISTS', `export ${name} exists`, {
        fields: { [LOG_FIELDS.driveId]: name },
      });
    }
    const cleanup = new Cleanup();
    try {
      const store = createBlobStore(spec.store);
      cleanup.add('close store', () => store.close?.());
      const cache =
        spec.cache === undefined ? undefined : await this.#useCache(spec.cache, cleanup);
      const device = await ImageDevice.open({ image: spec.image, store, cache, upper: spec.upper });
      cleanup.add('close device', () => device.close());
      const live = await this.#listen(name, device, cleanup);
      this.#exports.set(name, live);
      if (spec.prefetch !== undefined) void device.prefetch(spec.prefetch).catch(() => undefined);
      return live.socketPath;
    } catch (err) {
      await cleanup.run().catch(() => undefined);
      throw err;
    }
  }

  /** Stops serving `name`: no new connections, requests in flight finish, the device is flushed and closed. */
  async removeExport(name: string): Promise<void> {
    this.#assertOpen();
    await this.#remove(name);
  }

  async #remove(name: string): Promise<void> {
    const live = this.#lookup(name);
    this.#exports.delete(name);
    await live.cleanup.run();
  }

  /** Seals the export's upper (see `ImageDevice.seal`); clients stay connected. */
  sealExport(name: string, options?: SealOptions): Promise<SealResult> {
    return this.#get(name).provider.seal(options);
  }

  /** Flushes the export's device. */
  flushExport(name: string): Promise<void> {
    return this.#get(name).provider.flush();
  }

  /** Counters of every export and cache. */
  stats(): NbdHostStats {
    const exports: Record<string, ExportStats> = {};
    for (const [name, e] of this.#exports) {
      exports[name] = {
        ...e.counters,
        socketPath: e.socketPath,
        device: e.provider.stats(),
        image: e.provider.image,
      };
    }
    const caches: Record<string, CacheStats> = {};
    for (const [dir, c] of this.#caches) caches[dir] = c.cache.stats();
    return { exports, caches };
  }

  /** Removes every export and closes every cache. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const names = [...this.#exports.keys()];
    const results = await Promise.allSettled(names.map((n) => this.#remove(n)));
    const kept = [...this.#caches.values()];
    this.#caches.clear();
    results.push(...(await Promise.allSettled(kept.map((c) => c.cache.close()))));
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length > 0) {
      throw new AenvError('CLEANUP_FAILED', `closing ${failed.length} NBD export(s) failed`, {
        cause: new AggregateError(failed.map((r) => r.reason as unknown)),
      });
    }
  }

  async #listen(name: string, device: ImageDevice, cleanup: Cleanup): Promise<LiveExport> {
    await mkdir(this.#socketDir, { recursive: true });
    const socketPath = join(this.#socketDir, `${name}.sock`);
    if (Buffer.byteLength(socketPath) > 107) {
      throw new AenvError(
        'INVALID_ARGUMENT',
        `socket path too long for a unix socket: ${socketPath}`,
      );
    }
    if (existsSync(socketPath)) unlinkSync(socketPath);
    const connections = new Set<NbdConnection>();
    const server = createServer({ allowHalfOpen: false });
    const live: LiveExport = {
      name,
      provider: device,
      counters: newCounters(),
      socketPath,
      server,
      connections,
      cleanup,
    };
    const lookup = (n: string) => (n === name || n === '' ? live : undefined);
    server.on('connection', (socket) => {
      const conn = new NbdConnection(socket, lookup, () => [name]);
      connections.add(conn);
      socket.once('close', () => connections.delete(conn));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => {
      publish(STORAGE_CHANNELS.nbdError, {
        [LOG_FIELDS.driveId]: name,
        [LOG_FIELDS.errorCode]: 'listen',
        [LOG_FIELDS.errorMessage]: err.message,
      });
    });
    cleanup.add('unlink socket', () => {
      if (existsSync(socketPath)) unlinkSync(socketPath);
    });
    cleanup.add('close connections', async () => {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...connections].map((c) => c.shutdown()));
      await closing;
    });
    return live;
  }

  async #useCache(spec: NonNullable<ExportSpec['cache']>, cleanup: Cleanup): Promise<ChunkCache> {
    let entry = this.#caches.get(spec.dir);
    if (entry === undefined) {
      const cache = await ChunkCache.open(spec);
      entry = { cache, users: 0 };
      this.#caches.set(spec.dir, entry);
    }
    entry.users += 1;
    const used = entry;
    cleanup.add('release cache', async () => {
      used.users -= 1;
      if (used.users === 0 && !this.#keepCaches && this.#caches.get(spec.dir) === used) {
        this.#caches.delete(spec.dir);
        await used.cache.close();
      }
    });
    return used.cache;
  }

  #get(name: string): LiveExport {
    this.#assertOpen();
    return this.#lookup(name);
  }

  #lookup(name: string): LiveExport {
    const live = this.#exports.get(name);
    if (live === undefined) {
      throw new AenvError('NBD_EXPORT_NOT_FOUND', `no export ${name}`, {
        fields: { [LOG_FIELDS.driveId]: name },
      });
    }
    return live;
  }

  #assertOpen(): void {
    if (this.#closed) throw new AenvError('NBD_SERVER_CLOSED', 'the NBD host is closed');
  }
}
