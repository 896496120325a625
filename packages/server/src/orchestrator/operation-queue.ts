/**
 * Serializes the operations of one sandbox: at most one runs at a time, in
 * arrival order — except kills, which go ahead of every operation that has
 * not started yet (a kill during a pause waits for the pause, then wins;
 * operations queued behind it find the sandbox killed when they start and
 * fail their own state check).
 *
 * @module
 */

interface Job {
  readonly run: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/** A per-sandbox operation queue. */
export class OperationQueue {
  readonly #jobs: Job[] = [];
  #busy = false;

  /** How many operations are queued or running. */
  get length(): number {
    return this.#jobs.length + (this.#busy ? 1 : 0);
  }

  /** Runs `op` after every operation queued before it. */
  run<T>(op: () => Promise<T>): Promise<T> {
    return this.#enqueue(op, false);
  }

  /** Runs `op` after the operation in progress, ahead of those still waiting. */
  runFirst<T>(op: () => Promise<T>): Promise<T> {
    return this.#enqueue(op, true);
  }

  #enqueue<T>(op: () => Promise<T>, first: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job: Job = { run: op, resolve: resolve as (v: unknown) => void, reject };
      if (first) this.#jobs.unshift(job);
      else this.#jobs.push(job);
      void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (let job = this.#jobs.shift(); job !== undefined; job = this.#jobs.shift()) {
        try {
          job.resolve(await job.run());
        } catch (err) {
          job.reject(err);
        }
      }
    } finally {
      this.#busy = false;
    }
  }
}
