/**
 * `NbdServer`: serves image stacks over NBD on unix sockets, from a worker
 * thread. This object lives on the caller's thread and only forwards calls;
 * the devices, sockets, caches and all block I/O live in the worker
 * (`nbd-worker.ts`), so a flood of guest I/O cannot stall the daemon's API.
 *
 * QEMU attaches an export with
 * `-drive driver=nbd,server.type=unix,server.path=<socket>,export=<name>`
 * (see `qemuNbdDriveOptions`); `qemu-img`/`qemu-io` take `nbdUnixUri()`.
 *
 * If the worker dies, every pending and later call fails with
 * `NBD_WORKER_FAILED`.
 *
 * @module
 */
import { channel } from 'node:diagnostics_channel';
import { Worker } from 'node:worker_threads';
import { AenvError } from '@aenv/shared';
import type { SealOptions, SealResult } from '../image/image-device.js';
import type { ExportSpec, NbdHostStats } from './nbd-host.js';
import { deserializeError, type NbdCall, type WorkerMessage } from './nbd-rpc.js';

/** Options of {@link NbdServer.start}. */
export interface NbdServerOptions {
  /** Directory for the export sockets (`<name>.sock`). */
  readonly socketDir: string;
  /**
   * Positional file I/O on the worker thread is synchronous (faster on the
   * page cache; a slow disk stalls this server's exports, never the caller's
   * thread) rather than through libuv's thread pool. @default true
   */
  readonly syncIo?: boolean;
  /**
   * Keep each chunk cache open (and warm) once opened, until `close()`,
   * instead of closing it with its last export (`NbdHostOptions.keepCaches`).
   * @default false
   */
  readonly keepCaches?: boolean;
}

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/** NBD exports served from a worker thread. */
export class NbdServer {
  readonly socketDir: string;
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #exited: Promise<void>;
  #nextId = 1;
  #failure: AenvError | undefined;
  #closing: Promise<void> | undefined;

  private constructor(socketDir: string, worker: Worker) {
    this.socketDir = socketDir;
    this.#worker = worker;
    worker.on('message', (m: WorkerMessage) => this.#onMessage(m));
    worker.on('error', (err) => this.#fail(err));
    this.#exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        this.#fail(new Error(`NBD worker exited with code ${code}`));
        resolve();
      });
    });
  }

  /** Starts the worker thread. */
  static async start(options: NbdServerOptions): Promise<NbdServer> {
    const worker = new Worker(new URL('./nbd-worker.js', import.meta.url), {
      workerData: {
        socketDir: options.socketDir,
        syncIo: options.syncIo ?? true,
        keepCaches: options.keepCaches ?? false,
      },
    });
    await new Promise<void>((resolve, reject) => {
      worker.once('online', resolve);
      worker.once('error', reject);
    });
    return new NbdServer(options.socketDir, worker);
  }

  /** The worker's thread id (block I/O runs there). */
  get threadId(): number {
    return this.#worker.threadId;
  }

  /**
   * Opens `spec.image` and serves it as export `name`.
   * @returns the unix socket path of the export.
   */
  async addExport(name: string, spec: ExportSpec): Promise<string> {
    return (await this.#call({ op: 'addExport', name, spec })) as string;
  }

  /** Stops serving `name`, flushing and closing its device. */
  async removeExport(name: string): Promise<void> {
    await this.#call({ op: 'removeExport', name });
  }

  /** Seals export `name`'s upper into a new layer; it continues on a fresh upper. */
  async sealExport(name: string, options?: SealOptions): Promise<SealResult> {
    return (await this.#call({
      op: 'sealExport',
      name,
      ...(options ? { options } : {}),
    })) as SealResult;
  }

  /** Flushes export `name`. */
  async flushExport(name: string): Promise<void> {
    await this.#call({ op: 'flushExport', name });
  }

  /** Counters of every export and cache. */
  async stats(): Promise<NbdHostStats> {
    return (await this.#call({ op: 'stats' })) as NbdHostStats;
  }

  /** Removes every export and stops the worker. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        if (this.#failure === undefined) await this.#call({ op: 'close' });
      } finally {
        this.#failure ??= new AenvError('NBD_SERVER_CLOSED', 'the NBD server is closed');
        const timer = setTimeout(() => void this.#worker.terminate(), 5000);
        await this.#exited;
        clearTimeout(timer);
      }
    })();
    return this.#closing;
  }

  #call(call: NbdCall): Promise<unknown> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#closing !== undefined && call.op !== 'close') {
      return Promise.reject(new AenvError('NBD_SERVER_CLOSED', 'the NBD server is closed'));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, call });
    });
  }

  #onMessage(m: WorkerMessage): void {
    if ('event' in m) {
      channel(m.event).publish(m.payload);
      return;
    }
    const p = this.#pending.get(m.id);
    if (p === undefined) return;
    this.#pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(deserializeError(m.error));
  }

  #fail(err: unknown): void {
    this.#failure ??= new AenvError('NBD_WORKER_FAILED', 'the NBD worker thread failed', {
      cause: err,
    });
    for (const p of this.#pending.values()) p.reject(this.#failure);
    this.#pending.clear();
  }
}
