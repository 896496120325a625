/**
 * `NodeStorage`: the storage engine as one node uses it. It owns the NBD
 * server (a worker thread serving every sandbox's rootfs on its own unix
 * socket under `$AENV_HOME/nbd/`), the node-wide chunk cache in front of
 * the blob store (kept warm across sandboxes), the base image imported once
 * as a layer. It is the `SandboxDisks` the microVM launcher takes rootfs
 * disks from: each sandbox gets an NBD export of an image (its template's
 * snapshot's layers, or its own pause snapshot's) with a fresh upper in its
 * own directory; closing the disk removes the export and deletes the upper.
 *
 * Storage faults keep their codes (`STORAGE_NO_SPACE` for a full disk,
 * `BLOB_STORE_UNAVAILABLE` for a store that is down: the API answers 507 and
 * 503), and a disk that could not be opened leaves no export and no upper.
 *
 * A killed daemon leaves sockets, import scratch files and blob-store
 * temporaries behind (its uppers live in sandbox directories, which
 * `removeLeftoverSandboxes` deletes); `start` removes them before serving.
 *
 * @module
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError, Cleanup, LOG_FIELDS, categoryOf } from '@aenv/shared';
import {
  NbdServer,
  createBlobStore,
  deleteUpper,
  normalizeImageSpec,
  type NbdHostStats,
  type StorageSettings,
} from '@aenv/storage';
import { importBaseImageOnce, type BaseImageResult } from './base-image-import.js';
import { EngineDisk, type OpenImageRequest, type SandboxDisks } from './sandbox-disk.js';

/** Options of {@link NodeStorage.start}. */
export interface NodeStorageOptions {
  /** The daemon's state directory (`$AENV_HOME`). */
  readonly home: string;
  /** The resolved `storage` config section. */
  readonly settings: StorageSettings;
}

/** The upper's directory name inside a sandbox directory. */
export const UPPER_DIR_NAME = 'rootfs.upper';

/** Failures worth keeping as they are (the client may retry); others become `SBX_DISK_FAILED`. */
const KEPT_CATEGORIES = new Set(['Unavailable', 'ResourceExhausted']);

/** The storage engine of one node. */
export class NodeStorage implements SandboxDisks {
  readonly settings: StorageSettings;
  readonly #home: string;
  readonly #server: NbdServer;
  readonly #disks = new Map<string, EngineDisk>();
  /** Layers this process wrote, with when: young layers are never collected. */
  readonly #written = new Map<string, number>();
  #closing: Promise<void> | undefined;

  private constructor(home: string, settings: StorageSettings, server: NbdServer) {
    this.#home = home;
    this.settings = settings;
    this.#server = server;
  }

  /** Removes what a killed predecessor left, and starts the NBD server. */
  static async start(options: NodeStorageOptions): Promise<NodeStorage> {
    const { home, settings } = options;
    const socketDir = join(home, 'nbd');
    await rm(socketDir, { recursive: true, force: true });
    await rm(join(home, 'storage', 'tmp'), { recursive: true, force: true });
    if (settings.store.kind === 'fs') {
      await rm(join(settings.store.root, '.tmp'), { recursive: true, force: true });
    }
    await mkdir(socketDir, { recursive: true, mode: 0o700 });
    const server = await NbdServer.start({ socketDir, keepCaches: true });
    return new NodeStorage(home, settings, server);
  }

  /**
   * Imports the raw base image as a layer unless an earlier run did (see
   * `base-image-import.ts`).
   */
  async importBaseImage(path: string, contentDigest?: string): Promise<BaseImageResult> {
    const store = createBlobStore(this.settings.store);
    try {
      const result = await importBaseImageOnce({
        path,
        contentDigest,
        store,
        registryFile: join(this.#home, 'storage', 'base-images.json'),
        workDir: join(this.#home, 'storage', 'tmp'),
      });
      for (const layer of result.image.layers) this.#written.set(layer, Date.now());
      return result;
    } finally {
      await store.close?.();
    }
  }

  /**
   * Serves `image` with a fresh upper as export `name` (a sandbox resumed
   * from a sealed stack, say).
   * @throws {AenvError} `SBX_DISK_FAILED` (cause attached), or the storage
   *   error itself when it is retryable (`BLOB_STORE_UNAVAILABLE`, `STORAGE_NO_SPACE`).
   */
  async openImage(request: OpenImageRequest): Promise<EngineDisk> {
    const { name, upperDir } = request;
    try {
      const image = normalizeImageSpec(request.image);
      const socketPath = await this.#server.addExport(name, {
        image,
        store: this.settings.store,
        upper: { dir: upperDir, mode: 'create' },
        cache: this.settings.cache,
      });
      const disk = new EngineDisk({
        server: this.#server,
        name,
        socketPath,
        image,
        upperDir,
        onClosed: () => void this.#disks.delete(name),
        onSealed: (digest) => void this.#written.set(digest, Date.now()),
      });
      this.#disks.set(name, disk);
      return disk;
    } catch (err) {
      // A failed open (a full disk, say) can leave a half-made upper; one that
      // was there before (STORAGE_UPPER_EXISTS) is someone else's.
      if (!(err instanceof AenvError && err.code === 'STORAGE_UPPER_EXISTS')) {
        await deleteUpper(upperDir).catch(() => undefined);
      }
      throw diskFailure(err, name);
    }
  }

  /** Layers written by this process within the last `ms` (seals and imports). */
  writtenWithin(ms: number): Set<string> {
    const since = Date.now() - ms;
    for (const [d, at] of this.#written) if (at < since) this.#written.delete(d);
    return new Set(this.#written.keys());
  }

  /** The layers of every open disk (sandboxes running now). */
  openLayers(): Set<string> {
    return new Set([...this.#disks.values()].flatMap((d) => d.image.layers));
  }

  /** The open disk of a sandbox, if any. */
  disk(name: string): EngineDisk | undefined {
    return this.#disks.get(name);
  }

  /** Counters of every export and of the chunk cache. */
  stats(): Promise<NbdHostStats> {
    return this.#server.stats();
  }

  /** Closes every disk (deleting its upper) and stops the NBD server. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const cleanup = new Cleanup();
      cleanup.add('stop NBD server', () => this.#server.close());
      for (const disk of this.#disks.values())
        cleanup.add(`close disk ${disk.name}`, () => disk.close());
      await cleanup.run();
    })();
    return this.#closing;
  }
}

function diskFailure(err: unknown, name: string): AenvError {
  if (err instanceof AenvError && KEPT_CATEGORIES.has(categoryOf(err.code))) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new AenvError('SBX_DISK_FAILED', `cannot serve the disk of sandbox ${name}: ${detail}`, {
    cause: err,
    fields: { [LOG_FIELDS.sandboxId]: name },
  });
}
