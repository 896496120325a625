/**
 * The QEMU child process: spawning it (in a network namespace when asked),
 * noticing its end, keeping the tail of its stderr for error messages.
 *
 * Contract: `exited` always resolves (never rejects), also when the spawn
 * itself failed (then `spawnError` says why); `kill` is safe at any time.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** How the process ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const STDERR_TAIL = 4096;

/** See the module comment. */
export class QemuProcess {
  readonly #child: ChildProcess;
  readonly exited: Promise<ProcessExit>;
  #exit: ProcessExit | undefined;
  #stderr = '';
  #spawnError: string | undefined;

  private constructor(program: string, args: readonly string[], env?: Record<string, string>) {
    this.#child = spawn(program, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
    });
    this.#child.stderr?.setEncoding('utf8');
    this.#child.stderr?.on('data', (s: string) => {
      this.#stderr = (this.#stderr + s).slice(-STDERR_TAIL);
    });
    this.exited = new Promise<ProcessExit>((resolve) => {
      this.#child.once('error', (err) => {
        this.#spawnError = err.message;
        // 'close' does not follow a failed spawn
        if (this.#child.pid === undefined) this.#settle(resolve, { code: null, signal: null });
      });
      // 'close' (not 'exit'): stderr is fully read by then
      this.#child.once('close', (code, signal) => this.#settle(resolve, { code, signal }));
    });
  }

  /** Spawns `program args`, with `env` added to this process's environment. */
  static spawn(
    program: string,
    args: readonly string[],
    env?: Record<string, string>,
  ): QemuProcess {
    return new QemuProcess(program, args, env);
  }

  #settle(resolve: (e: ProcessExit) => void, exit: ProcessExit): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    resolve(exit);
  }

  /** The pid, once spawned. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** How it ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** Why it could not be spawned, if it could not. */
  get spawnError(): string | undefined {
    return this.#spawnError;
  }

  /** A one-line reason the process is gone, or undefined while it runs. */
  deathReason(): string | undefined {
    if (this.#spawnError !== undefined) return `could not start: ${this.#spawnError}`;
    if (this.#exit === undefined) return undefined;
    const how = this.#exit.signal ?? `status ${this.#exit.code}`;
    const err = this.stderrTail().trim();
    return `exited (${how})${err === '' ? '' : `: ${err}`}`;
  }

  /** The end of what the process wrote to stderr. */
  stderrTail(): string {
    return this.#stderr;
  }

  /** Sends a signal if the process still runs. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.#exit === undefined && this.#child.pid !== undefined) this.#child.kill(signal);
  }
}
