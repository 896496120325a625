/**
 * What a command runs with: its streams, environment and working
 * directory (injectable, so tests run commands in-process), and the SDK
 * client built from the connection settings.
 *
 * @module
 */
import type { AenvClient } from '@aenv/sdk';
import type { Connection } from './settings/cli-settings.js';

/** A stream the CLI writes to. */
export interface OutStream {
  write(chunk: string | Uint8Array): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
  readonly rows?: number;
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
}

/** The stream the CLI reads from. */
export interface InStream {
  readonly isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'end', listener: () => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** The process the CLI runs in, as commands see it. */
export interface CliIo {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly stdin: InStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Registers a handler for a terminal resize (SIGWINCH); returns its remover. */
  onResize?(listener: () => void): () => void;
}

/** A command's context. */
export interface CliContext extends CliIo {
  /** The command's name, for messages (`pause`). */
  readonly command: string;
  /** The node named by --url/--key, the environment, `aenv auth`, or the defaults. */
  connection(): Connection;
  /** The SDK client for {@link connection}. */
  client(): Promise<AenvClient>;
  /** Where `aenv auth` keeps its settings. */
  readonly settingsPath: string;
  /** Writes a line to stdout. */
  out(line: string): void;
  /** Writes a line to stderr. */
  err(line: string): void;
}
