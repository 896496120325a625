/**
 * The one interface envd drives a started process through, whether its
 * output comes from pipes or from a pseudo-terminal.
 *
 * @module
 */
import type { UserInfo } from '../users/user-db.js';

/** Which stream a chunk of output came from. */
export type OutputKind = 'stdout' | 'stderr' | 'pty';

/** How a process ended, in the terms of the `end` event. */
export interface ExitInfo {
  /** The exit code, or -1 when a signal ended the process. */
  readonly exitCode: number;
  /** True when the process exited by itself (not by a signal). */
  readonly exited: boolean;
  /** `exit status N` or `signal: <name>`, as E2B's envd (Go) words it. */
  readonly status: string;
  /** The same text as `status` when the process failed; absent on success. */
  readonly error?: string;
}

/** What a spawner needs to start a process. */
export interface SpawnSpec {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly user: UserInfo;
  /** Pipe mode: whether stdin is a pipe (else /dev/null). */
  readonly stdin: boolean;
  /** PTY mode when set. */
  readonly pty?: { readonly cols: number; readonly rows: number };
}

/** A started process, seen through its output and input. */
export interface ProcessHandle {
  readonly pid: number;
  /** Output chunks, in order. */
  onOutput(listener: (kind: OutputKind, data: Buffer) => void): void;
  /** Called once, after the process exited and its output was drained. */
  onExit(listener: (exit: ExitInfo) => void): void;
  /** Stops reading output (backpressure); the process blocks when its pipe fills. */
  pause(): void;
  resume(): void;
  /** Writes to stdin (pipe mode) or to the terminal (PTY mode). */
  write(data: Uint8Array): void;
  /** Closes stdin (pipe mode). */
  closeInput(): void;
  /** Whether input can still be written. */
  readonly inputOpen: boolean;
  /** Resizes the terminal (PTY mode only). */
  resize?(cols: number, rows: number): void;
  /** Sends a signal to the process group. */
  kill(signal: NodeJS.Signals): void;
}
