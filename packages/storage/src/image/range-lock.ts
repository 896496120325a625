/**
 * `RangeLock`: serializes operations on overlapping block ranges, in the
 * order they asked.
 *
 * An operation waits for every earlier operation whose range overlaps its
 * own, whether that one is running or still waiting itself; operations on
 * disjoint ranges run concurrently. Because the order is the arrival order,
 * two overlapping writes always land in the order they were issued, which
 * keeps a device and a flat model of it in step.
 *
 * @module
 */

interface Holder {
  readonly start: number;
  readonly end: number;
  readonly done: Promise<void>;
}

/** A FIFO lock over half-open integer ranges. */
export class RangeLock {
  readonly #holders = new Set<Holder>();

  /** Number of operations running or waiting. */
  get size(): number {
    return this.#holders.size;
  }

  /** Runs `fn` once no earlier operation overlaps `[start, end)`. */
  async run<T>(start: number, end: number, fn: () => Promise<T>): Promise<T> {
    const before: Promise<void>[] = [];
    for (const h of this.#holders) {
      if (h.start < end && start < h.end) before.push(h.done);
    }
    let release!: () => void;
    const holder: Holder = { start, end, done: new Promise((r) => (release = r)) };
    this.#holders.add(holder);
    try {
      if (before.length > 0) await Promise.all(before);
      return await fn();
    } finally {
      this.#holders.delete(holder);
      release();
    }
  }
}
