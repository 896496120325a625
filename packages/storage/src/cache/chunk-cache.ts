/**
 * `ChunkCache`: a local, byte-budgeted LRU cache of layer chunks fetched
 * from a remote blob store.
 *
 * Layout: one slab file `<dir>/chunks.slab` cut into `budget / slotSize`
 * slots; a chunk (uncompressed, at most `slotSize` bytes) occupies one
 * slot. Bytes in use can therefore never exceed the budget, on disk or in
 * the accounting. The slab starts empty on every open (the cache is a cache:
 * losing it costs refetches, never correctness).
 *
 * Behaviour:
 * - a miss calls the caller's loader once per key, however many readers
 *   ask at the same time (in-flight fetches are shared);
 * - a slot being read is pinned and cannot be evicted, so a reader never
 *   sees another chunk's bytes; when every slot is pinned or a chunk is
 *   larger than a slot, the chunk is served from memory and not cached
 *   (counted as a bypass) rather than exceed the budget;
 * - eviction takes the least recently used unpinned chunk.
 *
 * Beside the chunks it keeps, in memory, the verified headers and indexes
 * of the layers read through it (`layers`, a {@link LayerMetaCache}), so a
 * layer whose chunks are cached opens without the store.
 *
 * One cache directory belongs to one cache instance (a lock file holds the
 * owner's pid); the NBD worker owns the caches of the exports it serves.
 *
 * @module
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import { closeFd, errnoOf, fsError, openFd, readFull, writeFull } from '../file-io.js';
import { LayerMetaCache } from './layer-meta-cache.js';

/** The default slot size: 1 MiB, the default layer chunk size. */
export const DEFAULT_SLOT_SIZE = 1 << 20;

/** Options of {@link ChunkCache.open}. */
export interface ChunkCacheOptions {
  readonly dir: string;
  /** Most bytes the cache may hold. */
  readonly budgetBytes: number;
  /** Size of one slot; chunks larger than this are never cached. @default 1 MiB */
  readonly slotSize?: number;
}

/** What a loader returns: the uncompressed chunk and the bytes it transferred. */
export interface LoadedChunk {
  readonly plain: Buffer;
  readonly fetchedBytes: number;
}

/** Cache counters. */
export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
  /** Readers that joined a fetch already in flight. */
  readonly sharedFetches: number;
  /** Bytes transferred from blob stores by loaders. */
  readonly bytesFetched: number;
  readonly evictions: number;
  /** Chunks served without being cached (no unpinned slot, or too large). */
  readonly bypasses: number;
  readonly usedBytes: number;
  /** Highest `usedBytes` ever reached. */
  readonly peakBytes: number;
  readonly budgetBytes: number;
  readonly entries: number;
}

interface Entry {
  readonly slot: number;
  readonly length: number;
  pins: number;
  ready: boolean;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A bounded LRU cache of chunks in a local slab file. */
export class ChunkCache {
  readonly dir: string;
  readonly slotSize: number;
  /** Headers and indexes of the layers read through this cache. */
  readonly layers = new LayerMetaCache();
  readonly #fd: number;
  readonly #entries = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<Buffer>>();
  readonly #free: number[];
  readonly #stats: Mutable<CacheStats>;
  #closed = false;

  private constructor(dir: string, fd: number, budgetBytes: number, slotSize: number) {
    this.dir = dir;
    this.#fd = fd;
    this.slotSize = slotSize;
    const slots = Math.floor(budgetBytes / slotSize);
    this.#free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
    this.#stats = {
      hits: 0,
      misses: 0,
      sharedFetches: 0,
      bytesFetched: 0,
      evictions: 0,
      bypasses: 0,
      usedBytes: 0,
      peakBytes: 0,
      budgetBytes,
      entries: 0,
    };
  }

  /**
   * Opens (emptying) the cache in `dir`.
   * @throws {AenvError} `STORAGE_CACHE_LOCKED` when another live cache owns `dir`.
   */
  static async open(options: ChunkCacheOptions): Promise<ChunkCache> {
    const slotSize = options.slotSize ?? DEFAULT_SLOT_SIZE;
    if (!Number.isSafeInteger(options.budgetBytes) || options.budgetBytes < 0 || slotSize <= 0) {
      throw new AenvError('INVALID_ARGUMENT', 'cache budgetBytes and slotSize must be positive');
    }
    await mkdir(options.dir, { recursive: true });
    await takeLock(options.dir);
    const slab = join(options.dir, 'chunks.slab');
    const fd = await openFd(slab, 'w+').catch(async (err: unknown) => {
      await rm(join(options.dir, 'lock'), { force: true });
      throw err;
    });
    return new ChunkCache(options.dir, fd, options.budgetBytes, slotSize);
  }

  /** A snapshot of the counters. */
  stats(): CacheStats {
    return { ...this.#stats, entries: this.#entries.size };
  }

  /** Whether `key` is cached and readable now. */
  has(key: string): boolean {
    return this.#entries.get(key)?.ready === true;
  }

  /**
   * Copies `target.length` bytes from `offset` of chunk `key` into `target`,
   * loading the chunk with `load` on a miss.
   */
  async read(
    key: string,
    target: Uint8Array,
    offset: number,
    load: () => Promise<LoadedChunk>,
  ): Promise<void> {
    this.#assertOpen();
    const entry = this.#entries.get(key);
    if (entry?.ready === true) {
      this.#stats.hits += 1;
      this.#touch(key, entry);
      entry.pins += 1;
      try {
        await readFull(this.#fd, target, entry.slot * this.slotSize + offset);
      } finally {
        entry.pins -= 1;
      }
      return;
    }
    const plain = await this.#fetch(key, load);
    target.set(plain.subarray(offset, offset + target.length));
  }

  /** Makes sure `key` is cached (prefetch), loading it with `load` if needed. */
  async ensure(key: string, load: () => Promise<LoadedChunk>): Promise<void> {
    this.#assertOpen();
    if (this.#entries.has(key)) return;
    await this.#fetch(key, load);
  }

  /** Caches a chunk the caller already holds (e.g. one just sealed). */
  async insert(key: string, plain: Buffer): Promise<void> {
    this.#assertOpen();
    if (this.#entries.has(key) || this.#inflight.has(key)) return;
    const p = Promise.resolve(plain);
    this.#inflight.set(key, p);
    try {
      await this.#store(key, plain);
    } finally {
      this.#inflight.delete(key);
    }
  }

  /** Closes the slab and releases the directory. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inflight.values()]);
    await closeFd(this.#fd);
    await rm(join(this.dir, 'chunks.slab'), { force: true });
    await rm(join(this.dir, 'lock'), { force: true });
  }

  #fetch(key: string, load: () => Promise<LoadedChunk>): Promise<Buffer> {
    const pending = this.#inflight.get(key);
    if (pending !== undefined) {
      this.#stats.sharedFetches += 1;
      return pending;
    }
    this.#stats.misses += 1;
    const p = load().then(async ({ plain, fetchedBytes }) => {
      this.#stats.bytesFetched += fetchedBytes;
      if (!this.#closed) await this.#store(key, plain).catch(() => undefined);
      return plain;
    });
    this.#inflight.set(key, p);
    const forget = () => this.#inflight.delete(key);
    p.then(forget, forget);
    return p;
  }

  async #store(key: string, plain: Buffer): Promise<void> {
    const slot = plain.length <= this.slotSize ? this.#takeSlot() : undefined;
    if (slot === undefined) {
      this.#stats.bypasses += 1;
      return;
    }
    const entry: Entry = { slot, length: plain.length, pins: 1, ready: false };
    this.#entries.set(key, entry);
    this.#stats.usedBytes += entry.length;
    this.#stats.peakBytes = Math.max(this.#stats.peakBytes, this.#stats.usedBytes);
    try {
      await writeFull(this.#fd, plain, slot * this.slotSize);
      entry.ready = true;
    } catch (err) {
      this.#drop(key, entry);
      throw fsError(err, 'writing the chunk cache');
    } finally {
      entry.pins -= 1;
    }
  }

  #takeSlot(): number | undefined {
    const free = this.#free.pop();
    if (free !== undefined) return free;
    for (const [key, entry] of this.#entries) {
      if (entry.pins > 0 || !entry.ready) continue;
      this.#drop(key, entry);
      this.#stats.evictions += 1;
      return this.#free.pop();
    }
    return undefined;
  }

  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#stats.usedBytes -= entry.length;
    this.#free.push(entry.slot);
  }

  #touch(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
  }

  #assertOpen(): void {
    if (this.#closed) throw new AenvError('STORAGE_CLOSED', `chunk cache ${this.dir} is closed`);
  }
}

/**
 * Takes the cache's lock file: `<pid> <start time>` of the holder. A lock
 * whose pid is gone, or now belongs to a process started at another time
 * (pids are recycled: a daemon killed with SIGKILL leaves its lock behind,
 * and on a busy host its pid can be some other live process minutes
 * later), is stale and taken over.
 */
async function takeLock(dir: string): Promise<void> {
  const lock = join(dir, 'lock');
  const mine = `${process.pid} ${(await startTimeOf(process.pid)) ?? ''}`.trim();
  try {
    await writeFile(lock, mine, { flag: 'wx' });
    return;
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw fsError(err, `locking ${dir}`);
  }
  const [pidText, started] = (await readFile(lock, 'utf8').catch(() => '')).trim().split(' ');
  const owner = Number(pidText);
  if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
    const now = started === undefined ? undefined : await startTimeOf(owner);
    if (now === undefined || now === started) {
      throw new AenvError('STORAGE_CACHE_LOCKED', `chunk cache ${dir} is in use by pid ${owner}`, {
        fields: { path: dir, pid: owner },
      });
    }
  }
  await writeFile(lock, mine);
}

/** A process's start time (clock ticks since boot, `/proc/<pid>/stat` field 22); undefined off Linux. */
async function startTimeOf(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === 'EPERM';
  }
}
