/**
 * `RwGate`: an async reader-writer gate with FIFO fairness.
 *
 * Many holders of the shared side may run together; the exclusive side runs
 * alone. Waiters are served strictly in arrival order, so a waiting
 * exclusive holder is never starved by a stream of shared ones (a shared
 * request that arrives after an exclusive one waits behind it).
 *
 * @module
 */

interface Waiter {
  readonly exclusive: boolean;
  readonly grant: () => void;
}

/** An async reader-writer gate. */
export class RwGate {
  #shared = 0;
  #exclusive = false;
  readonly #queue: Waiter[] = [];

  /** Runs `fn` holding the shared side. */
  async shared<T>(fn: () => Promise<T>): Promise<T> {
    await this.#acquire(false);
    try {
      return await fn();
    } finally {
      this.#shared -= 1;
      this.#drain();
    }
  }

  /** Runs `fn` holding the exclusive side. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    await this.#acquire(true);
    try {
      return await fn();
    } finally {
      this.#exclusive = false;
      this.#drain();
    }
  }

  #acquire(exclusive: boolean): Promise<void> {
    if (this.#queue.length === 0 && this.#canGrant(exclusive)) {
      this.#take(exclusive);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#queue.push({ exclusive, grant: resolve });
    });
  }

  #canGrant(exclusive: boolean): boolean {
    if (this.#exclusive) return false;
    return exclusive ? this.#shared === 0 : true;
  }

  #take(exclusive: boolean): void {
    if (exclusive) this.#exclusive = true;
    else this.#shared += 1;
  }

  #drain(): void {
    for (;;) {
      const head = this.#queue[0];
      if (head === undefined || !this.#canGrant(head.exclusive)) return;
      this.#queue.shift();
      this.#take(head.exclusive);
      head.grant();
    }
  }
}
