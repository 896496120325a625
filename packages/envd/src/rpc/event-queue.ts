/**
 * An unbounded single-consumer queue of events that a producer pushes and a
 * stream handler pulls, with a byte weight so producers can apply
 * backpressure (pause their source while a consumer lags).
 *
 * @module
 */

/** A queue of events, consumed with `next()` or `for await`. */
export class EventQueue<T> implements AsyncIterableIterator<T> {
  readonly #items: T[] = [];
  readonly #weigh: (item: T) => number;
  #waiter: ((result: IteratorResult<T>) => void) | undefined;
  #closed = false;
  #weight = 0;
  /** Called after `next()` took an item; producers use it to resume. */
  onTake: (() => void) | undefined;
  /** Called once when the consumer stops (`return()`/`close()`). */
  onClose: (() => void) | undefined;

  constructor(weigh: (item: T) => number = () => 0) {
    this.#weigh = weigh;
  }

  /** Total weight of the queued items. */
  get weight(): number {
    return this.#weight;
  }

  /** Whether the queue was closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Adds an item; ignored after `close()`. */
  push(item: T): void {
    if (this.#closed) return;
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter({ value: item, done: false });
      return;
    }
    this.#items.push(item);
    this.#weight += this.#weigh(item);
  }

  /** Ends the queue: buffered items are dropped, the consumer sees done. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#items.length = 0;
    this.#weight = 0;
    this.#waiter?.({ value: undefined, done: true });
    this.#waiter = undefined;
    this.onClose?.();
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.#items.shift();
    if (item !== undefined) {
      this.#weight -= this.#weigh(item);
      this.onTake?.();
      return Promise.resolve({ value: item, done: false });
    }
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.#waiter = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
