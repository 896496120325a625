/**
 * `Cleanup`: an undo stack for multi-step operations.
 *
 * A multi-step operation (create: slot, tap, drive, VMM process) registers
 * the undo of each step right after the step succeeds. On failure, `run()`
 * undoes them in reverse order; on success, `move()` hands the steps to
 * whoever owns the result (the sandbox, which undoes them on kill).
 *
 * Contract:
 * - steps run last-in first-out, each at most once, even if `run()` is
 *   called again or concurrently (later calls get the same promise);
 * - every step runs even if earlier ones fail; failures are collected into
 *   one `CLEANUP_FAILED` error whose `cause` is an `AggregateError`;
 * - a step added after `run()` has started runs at once (a resource that
 *   arrives late, e.g. a process that finished spawning after an abort,
 *   is still released); its failure goes to `onLateError`.
 *
 * Node 20 has no `AsyncDisposableStack`; this class implements
 * `Symbol.asyncDispose` so it works with `await using`.
 *
 * @module
 */
import { AenvError } from './aenv-error.js';

/** One undo step. */
export type CleanupStep = () => void | Promise<void>;

/** Options of {@link Cleanup}. */
export interface CleanupOptions {
  /** Receives failures of steps added after `run()` started. Default: ignore. */
  readonly onLateError?: (err: unknown, label: string) => void;
}

interface Entry {
  readonly label: string;
  readonly step: CleanupStep;
}

/** A LIFO stack of undo steps that runs once. */
export class Cleanup implements AsyncDisposable {
  #entries: Entry[] = [];
  #running: Promise<void> | undefined;
  readonly #onLateError: (err: unknown, label: string) => void;

  constructor(options: CleanupOptions = {}) {
    this.#onLateError = options.onLateError ?? (() => undefined);
  }

  /** How many steps are waiting to run. */
  get size(): number {
    return this.#entries.length;
  }

  /** Whether `run()` has been called. */
  get started(): boolean {
    return this.#running !== undefined;
  }

  /**
   * Registers an undo step. After `run()` has started, the step runs
   * immediately instead (see the module comment).
   */
  add(label: string, step: CleanupStep): void {
    if (this.#running === undefined) {
      this.#entries.push({ label, step });
      return;
    }
    runStep({ label, step }).then(
      (err) => {
        if (err !== undefined) this.#onLateError(err, label);
      },
      (err: unknown) => this.#onLateError(err, label),
    );
  }

  /**
   * Moves every pending step into a new `Cleanup` and leaves this one empty,
   * so that disposing this one does nothing. Use it when an operation
   * succeeded and its resources now belong to the result.
   */
  move(options: CleanupOptions = {}): Cleanup {
    const next = new Cleanup(options);
    next.#entries = this.#entries;
    this.#entries = [];
    return next;
  }

  /**
   * Runs every step in reverse order of registration, once.
   * @throws {AenvError} `CLEANUP_FAILED` when any step failed, after all ran.
   */
  run(): Promise<void> {
    this.#running ??= this.#runAll();
    return this.#running;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.run();
  }

  async #runAll(): Promise<void> {
    const failures: unknown[] = [];
    const labels: string[] = [];
    while (this.#entries.length > 0) {
      const entry = this.#entries.pop() as Entry;
      const err = await runStep(entry);
      if (err !== undefined) {
        failures.push(err);
        labels.push(entry.label);
      }
    }
    if (failures.length > 0) {
      throw new AenvError('CLEANUP_FAILED', `cleanup failed: ${labels.join(', ')}`, {
        cause: new AggregateError(failures, `${failures.length} cleanup step(s) failed`),
        fields: { steps: labels.join(',') },
      });
    }
  }
}

async function runStep(entry: Entry): Promise<unknown> {
  try {
    await entry.step();
    return undefined;
  } catch (err) {
    return err ?? new Error(`cleanup step ${entry.label} threw ${String(err)}`);
  }
}
