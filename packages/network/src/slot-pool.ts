/**
 * The pool of ready, pre-built slots, kept between two watermarks.
 *
 * When fewer than `low` slots are ready or being built, one background loop
 * builds batches until `high` are; released slots come back (after the
 * manager scrubbed them) while fewer than `high` are ready, and are
 * destroyed otherwise. A failed batch is reported and retried with
 * exponential backoff; acquiring never waits for the loop (an empty pool
 * means a cold build). `close` stops the loop, waits for a batch in flight
 * and hands every ready slot back for destruction.
 *
 * @module
 */
import type { SlotResource } from './slot.js';

/** What the pool needs from its owner. */
export interface SlotPoolOptions {
  readonly low: number;
  readonly high: number;
  /** Builds up to `count` slots; fewer (even none) when capacity runs out. */
  readonly build: (count: number) => Promise<SlotResource[]>;
  /** Receives failures of background batches. */
  readonly onError: (err: unknown) => void;
  /** Most slots per batch. Default 16. */
  readonly batchSize?: number;
  /** First retry delay after a failed batch; doubles up to 30 s. Default 1 s. */
  readonly retryMs?: number;
}

const MAX_RETRY_MS = 30_000;

/** Ready slots between two watermarks, refilled in the background. */
export class SlotPool {
  readonly #options: SlotPoolOptions;
  readonly #ready: SlotResource[] = [];
  #building = 0;
  #loop: Promise<void> | undefined;
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(options: SlotPoolOptions) {
    this.#options = options;
  }

  /** Slots ready to hand out. */
  get ready(): number {
    return this.#ready.length;
  }

  /** Slots being built by the background loop. */
  get building(): number {
    return this.#building;
  }

  /** Takes a ready slot, if any, and starts a refill when below `low`. */
  take(): SlotResource | undefined {
    const slot = this.#ready.shift();
    this.kick();
    return slot;
  }

  /** Offers a scrubbed slot back; `false` when the pool is full or closed (destroy it). */
  offer(slot: SlotResource): boolean {
    if (this.#closed || this.#ready.length + this.#building >= this.#options.high) return false;
    this.#ready.push(slot);
    return true;
  }

  /** Starts the refill loop when below the low watermark. */
  kick(): void {
    if (this.#closed || this.#loop !== undefined) return;
    if (this.#ready.length + this.#building >= this.#options.low) return;
    this.#loop = this.#fill().finally(() => {
      this.#loop = undefined;
    });
  }

  /** Stops refilling; resolves with every ready slot, for the owner to destroy. */
  async close(): Promise<SlotResource[]> {
    this.#closed = true;
    this.#wake?.();
    await this.#loop;
    return this.#ready.splice(0);
  }

  async #fill(): Promise<void> {
    let delay = this.#options.retryMs ?? 1000;
    const batch = this.#options.batchSize ?? 16;
    while (!this.#closed) {
      const want = Math.min(this.#options.high - this.#ready.length - this.#building, batch);
      if (want <= 0) return;
      this.#building += want;
      let built: SlotResource[];
      try {
        built = await this.#options.build(want);
      } catch (err) {
        this.#options.onError(err);
        if (this.#closed) return;
        await this.#sleep(delay);
        delay = Math.min(delay * 2, MAX_RETRY_MS);
        continue;
      } finally {
        this.#building -= want;
      }
      this.#ready.push(...built);
      if (built.length < want) return;
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      this.#wake = done;
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}
