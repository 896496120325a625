/**
 * `sandbox.pty`: interactive terminals in a sandbox. A PTY is a process
 * started with a terminal size (`/bin/bash -i -l`, as the e2b SDK starts
 * it); its output arrives as raw bytes, input is sent with `SendInput`,
 * and `resize` changes the terminal size (`Update`).
 *
 * @module
 */
import type { CommandHandle } from './command-handle.js';
import { killProcess, sendInput } from './command-handle.js';
import { attachProcess } from './commands.js';
import type { EnvdConnection } from './envd-connection.js';
import type { PtySizeWire, StartRequestWire } from './envd-wire.js';

/** A terminal size in character cells. */
export interface PtySize {
  readonly cols: number;
  readonly rows: number;
}

/** How to open a terminal. */
export interface PtyOptions extends PtySize {
  /** Terminal output, as raw bytes. */
  readonly onData: (bytes: Uint8Array) => void;
  /** Environment added to the sandbox's (TERM, LANG default to xterm-256color, C.UTF-8). */
  readonly envs?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly user?: string;
  /** The shell's lifetime in ms; 0 = unlimited. @default 0 */
  readonly timeoutMs?: number;
  /** Detaches from the terminal (the shell keeps running). */
  readonly signal?: AbortSignal;
}

/** Opens and drives terminals in one sandbox. */
export class Pty {
  readonly #connection: EnvdConnection;

  constructor(connection: EnvdConnection) {
    this.#connection = connection;
  }

  /** Starts an interactive login shell in a new terminal. */
  create(options: PtyOptions): Promise<CommandHandle> {
    const size: PtySizeWire = { cols: options.cols, rows: options.rows };
    const request: StartRequestWire = {
      process: {
        cmd: '/bin/bash',
        args: ['-i', '-l'],
        envs: { TERM: 'xterm-256color', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', ...options.envs },
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      },
      pty: { size },
    };
    return attachProcess(
      this.#connection,
      { method: 'Start', request, user: options.user },
      { timeoutMs: options.timeoutMs ?? 0, ...(options.signal ? { signal: options.signal } : {}) },
      { onOutput: (_stream, bytes) => options.onData(bytes), collect: false },
    );
  }

  /** Re-attaches to a terminal's shell. */
  connect(pid: number, options: Pick<PtyOptions, 'onData' | 'signal'>): Promise<CommandHandle> {
    return attachProcess(
      this.#connection,
      { method: 'Connect', request: { process: { pid } } },
      options.signal ? { signal: options.signal } : {},
      { onOutput: (_stream, bytes) => options.onData(bytes), collect: false },
    );
  }

  /** Types into a terminal. */
  sendInput(pid: number, data: string | Uint8Array): Promise<void> {
    return sendInput(this.#connection, pid, { pty: data });
  }

  /** Changes a terminal's size. */
  async resize(pid: number, size: PtySize): Promise<void> {
    await this.#connection.rpc.unary('process.Process/Update', {
      process: { pid },
      pty: { size: { cols: size.cols, rows: size.rows } },
    });
  }

  /** Kills a terminal's shell; false when it was already gone. */
  kill(pid: number): Promise<boolean> {
    return killProcess(this.#connection, pid);
  }
}
