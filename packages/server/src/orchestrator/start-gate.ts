/**
 * The node's admission gate for machine starts: at most `limit` creates,
 * batch members and fork children start their machines at once; the rest
 * wait their turn, first come first served. Without it, fifty concurrent
 * single creates each start a VMM at the same moment, none reaches envd
 * before its readiness timeout, and every running sandbox starves with
 * them (bench/load.mjs showed exactly that). A queued start is already a
 * `creating` sandbox (it counts against capacity); its readiness timeout
 * starts only once it is admitted.
 *
 * @module
 */

/** A counting semaphore with a FIFO queue. */
export class StartGate {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  /** @param limit starts admitted at once (at least 1). */
  constructor(limit: number) {
    this.#limit = Math.max(1, Math.floor(limit));
  }

  /** Starts running now and waiting for a turn. */
  get load(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  /** Runs `start` once admitted; the turn passes on however it ends. */
  async run<T>(start: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await start();
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#running--;
      else next();
    }
  }
}
