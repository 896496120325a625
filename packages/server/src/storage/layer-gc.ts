/**
 * Garbage collection of disk layers: a layer blob is deleted once no
 * snapshot (template, pause, fork, user — deleted or not, as long as its
 * record exists), no open disk and no recent write of this process
 * references it. "Recent" covers the window between a seal writing a layer
 * and the snapshot record that names it, so a layer in use is never
 * deleted; what is unreferenced and older goes.
 *
 * A node runs it after snapshots are deleted (debounced) and at start. On a
 * blob store shared by several nodes it must stay off (`storage.gc`): one
 * node cannot see the others' references.
 *
 * @module
 */
import { digestHex, layerKey, type BlobStore } from '@aenv/storage';

/** What the collector needs. */
export interface LayerGcOptions {
  readonly store: BlobStore;
  /** Every layer digest something references now. */
  readonly references: () => ReadonlySet<string>;
  /** Layers written recently by this process (kept whatever the references say). */
  readonly recent: () => ReadonlySet<string>;
  /** Called with what a collection deleted. */
  readonly onCollected?: (deleted: readonly string[]) => void;
  readonly onError?: (err: unknown) => void;
}

const PREFIX = 'layers/sha256/';

/** Deletes unreferenced layers. */
export class LayerGc {
  readonly #o: LayerGcOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<string[]> | undefined;
  #stopped = false;

  constructor(options: LayerGcOptions) {
    this.#o = options;
  }

  /**
   * Collects now (one collection at a time; a call during one waits for it
   * and then runs again, so a reference dropped meanwhile is seen).
   * @returns the digests deleted.
   */
  async collect(): Promise<string[]> {
    while (this.#running !== undefined) await this.#running.catch(() => undefined);
    this.#running = this.#collect();
    try {
      return await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  /** Collects soon (calls within `delayMs` share one collection). */
  schedule(delayMs = 1000): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.collect().catch((err: unknown) => this.#o.onError?.(err));
    }, delayMs);
    this.#timer.unref();
  }

  /**
   * Cancels a scheduled collection and refuses later ones (a node closing
   * deletes snapshots, which would schedule one against a closed state).
   * @returns when a collection in flight has ended.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  async #collect(): Promise<string[]> {
    const candidates: string[] = [];
    for await (const blob of this.#o.store.list(PREFIX)) {
      candidates.push(`sha256:${blob.key.slice(PREFIX.length)}`);
    }
    // References are read after listing: a layer sealed during the listing is recent.
    const referenced = new Set([...this.#o.references()].map((d) => `sha256:${digestHex(d)}`));
    const recent = this.#o.recent();
    const deleted: string[] = [];
    for (const digest of candidates) {
      if (referenced.has(digest) || recent.has(digest)) continue;
      await this.#o.store.delete(layerKey(digest));
      deleted.push(digest);
    }
    if (deleted.length > 0) this.#o.onCollected?.(deleted);
    return deleted;
  }
}
