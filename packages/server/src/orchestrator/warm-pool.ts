/**
 * `WarmPool<T>`: items made ahead of need between two watermarks, refilled
 * in the background (as the network's slot pool does). When fewer than
 * `low` items are ready or being made, the pool makes items, one at a time,
 * until `high` are (`low` 0: the pool stays empty); `take()` hands out
 * the oldest ready item at once (or nothing) and kicks the refill. A failed
 * make is retried after a back-off (1 s, doubling up to 30 s); an item that
 * becomes unusable while it waits (`lost`) is destroyed and replaced.
 *
 * Contract: every item the pool made is either handed out by `take()` or
 * destroyed by the pool (`destroy` runs once per item, its failures go to
 * `onError`); `drain()` destroys the ready items and aborts the one being
 * made, and the pool refills at the next `kick()`; after `close()` nothing
 * is made any more and `close()` resolves once every item is destroyed.
 *
 * @module
 */

/** What a {@link WarmPool} makes and how. */
export interface WarmPoolOptions<T> {
  /** Refill when fewer than this many items are ready or being made. */
  readonly low: number;
  /** Refill up to this many. */
  readonly high: number;
  /** Makes one item; must leave nothing behind when it fails or `signal` aborts. */
  readonly make: (signal: AbortSignal) => Promise<T>;
  /** Releases an item the pool will not hand out. */
  readonly destroy: (item: T) => Promise<void>;
  /** Resolves if an item becomes unusable while it waits in the pool. */
  readonly lost?: (item: T) => Promise<void>;
  /** Failures of background work (make, destroy). */
  readonly onError: (err: unknown) => void;
}

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/** See the module comment. */
export class WarmPool<T> {
  readonly #o: WarmPoolOptions<T>;
  readonly #ready: T[] = [];
  readonly #destroying = new Set<Promise<void>>();
  #making: { promise: Promise<void>; abort: AbortController } | undefined;
  #backoffMs = 0;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: WarmPoolOptions<T>) {
    if (options.low > options.high) {
      throw new RangeError(`low watermark ${options.low} above high ${options.high}`);
    }
    this.#o = options;
  }

  /** Items ready to take. */
  get ready(): number {
    return this.#ready.length;
  }

  /** Items being made (0 or 1). */
  get building(): number {
    return this.#making === undefined ? 0 : 1;
  }

  /** The oldest ready item, or undefined; starts a refill when needed. */
  take(): T | undefined {
    const item = this.#ready.shift();
    this.kick();
    return item;
  }

  /** Starts a refill if the pool is below its low watermark. */
  kick(): void {
    if (this.#closed || this.#making !== undefined || this.#retry !== undefined) return;
    if (this.#ready.length >= this.#o.low) return;
    this.#fill();
  }

  /** Destroys one ready item (the newest) without refilling; resolves with whether there was one. */
  async discardOne(): Promise<boolean> {
    const item = this.#ready.pop();
    if (item === undefined) return false;
    this.#destroy(item);
    await Promise.all(this.#destroying);
    return true;
  }

  /** Destroys the ready items and aborts the one being made; the pool refills at the next kick. */
  async drain(): Promise<void> {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const making = this.#making;
    making?.abort.abort(new Error('pool drained'));
    for (const item of this.#ready.splice(0)) this.#destroy(item);
    await making?.promise;
    await Promise.all(this.#destroying);
  }

  /** Stops refilling and destroys every item. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.drain();
  }

  #fill(): void {
    const abort = new AbortController();
    const promise = (async () => {
      while (!abort.signal.aborted && this.#ready.length < this.#o.high) {
        let item: T;
        try {
          item = await this.#o.make(abort.signal);
        } catch (err) {
          if (!abort.signal.aborted) this.#failed(err);
          return;
        }
        this.#backoffMs = 0;
        if (abort.signal.aborted || this.#closed) {
          this.#destroy(item);
          return;
        }
        this.#ready.push(item);
        this.#watch(item);
      }
    })().finally(() => {
      if (this.#making?.abort === abort) this.#making = undefined;
    });
    this.#making = { promise, abort };
  }

  #failed(err: unknown): void {
    this.#o.onError(err);
    this.#backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(FIRST_BACKOFF_MS, this.#backoffMs * 2));
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.kick();
    }, this.#backoffMs);
    this.#retry.unref();
  }

  #watch(item: T): void {
    void this.#o.lost?.(item).then(() => {
      const i = this.#ready.indexOf(item);
      if (i === -1) return;
      this.#ready.splice(i, 1);
      this.#destroy(item);
      this.kick();
    });
  }

  #destroy(item: T): void {
    const p = this.#o.destroy(item).catch((err: unknown) => this.#o.onError(err));
    this.#destroying.add(p);
    void p.finally(() => this.#destroying.delete(p));
  }
}
