/**
 * A process envd started, shared by every stream attached to it.
 *
 * Output is broadcast to the current subscribers (`Start` and every
 * `Connect`); with none, it is read and dropped, so a background process
 * never blocks on a full pipe after its client went away. A subscriber that
 * lags more than {@link HIGH_WATER} bytes pauses the output until it catches
 * up (the process then blocks on write, as it would on a slow terminal).
 *
 * @module
 */
import type { ExitInfo, OutputKind, ProcessHandle } from './process-handle.js';
import { EventQueue } from '../rpc/event-queue.js';

/** An event of a process, as its streams see it. */
export type ProcessEvent =
  | { readonly kind: 'data'; readonly output: OutputKind; readonly data: Buffer }
  | { readonly kind: 'end'; readonly exit: ExitInfo };

/** The command a process was started with, as `List` reports it. */
export interface ProcessConfigInfo {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly envs: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** Queued bytes above which a subscriber pauses the output. */
export const HIGH_WATER = 4 << 20;
/** Queued bytes under which paused output resumes. */
export const LOW_WATER = 1 << 20;

function weigh(event: ProcessEvent): number {
  return event.kind === 'data' ? event.data.byteLength : 0;
}

/** One started process and its subscribers. */
export class ManagedProcess {
  readonly pid: number;
  readonly config: ProcessConfigInfo;
  readonly tag: string | undefined;
  readonly isPty: boolean;
  /** Settles with the exit once the process ended and its output drained. */
  readonly ended: Promise<ExitInfo>;
  readonly #handle: ProcessHandle;
  readonly #subscribers = new Set<EventQueue<ProcessEvent>>();
  #paused = false;
  #deadline: NodeJS.Timeout | undefined;
  #exit: ExitInfo | undefined;

  constructor(
    handle: ProcessHandle,
    config: ProcessConfigInfo,
    tag: string | undefined,
    isPty: boolean,
  ) {
    this.#handle = handle;
    this.pid = handle.pid;
    this.config = config;
    this.tag = tag;
    this.isPty = isPty;
    handle.onOutput((output, data) => this.#broadcast({ kind: 'data', output, data }));
    this.ended = new Promise((resolve) => {
      handle.onExit((exit) => {
        clearTimeout(this.#deadline);
        this.#exit = exit;
        this.#broadcast({ kind: 'end', exit });
        resolve(exit);
      });
    });
  }

  /**
   * A queue of the events from now on. Closing it (or aborting `signal`)
   * detaches it; the process keeps running.
   */
  subscribe(signal?: AbortSignal): EventQueue<ProcessEvent> {
    const queue = new EventQueue<ProcessEvent>(weigh);
    if (this.#exit !== undefined) {
      queue.push({ kind: 'end', exit: this.#exit });
      return queue;
    }
    this.#subscribers.add(queue);
    const detach = (): void => queue.close();
    queue.onTake = () => this.#maybeResume();
    queue.onClose = () => {
      this.#subscribers.delete(queue);
      signal?.removeEventListener('abort', detach);
      this.#maybeResume();
    };
    if (signal?.aborted === true) queue.close();
    else signal?.addEventListener('abort', detach, { once: true });
    return queue;
  }

  /** Kills the process group with SIGKILL after `ms` (the `Start` timeout). */
  killAfter(ms: number): void {
    clearTimeout(this.#deadline);
    this.#deadline = setTimeout(() => this.signal('SIGKILL'), ms);
    this.#deadline.unref();
  }

  /** Sends a signal to the process group. */
  signal(signal: NodeJS.Signals): void {
    this.#handle.kill(signal);
  }

  /** The handle, for input and resizing. */
  get handle(): ProcessHandle {
    return this.#handle;
  }

  #broadcast(event: ProcessEvent): void {
    for (const queue of this.#subscribers) {
      queue.push(event);
      if (!this.#paused && queue.weight > HIGH_WATER) {
        this.#paused = true;
        this.#handle.pause();
      }
    }
  }

  #maybeResume(): void {
    if (!this.#paused) return;
    for (const queue of this.#subscribers) if (queue.weight > LOW_WATER) return;
    this.#paused = false;
    this.#handle.resume();
  }
}
