/**
 * A running process in a sandbox, attached through a `Start` or `Connect`
 * stream: its output is delivered to callbacks as it arrives and collected,
 * `wait()` gives its result. Disconnecting drops the stream only; the
 * process keeps running (envd's contract) and `Connect` re-attaches.
 *
 * @module
 */
import {
  AenvSdkError,
  CommandExitError,
  InternalError,
  NotFoundError,
  type CommandResult,
} from '../errors.js';
import { fromBase64, toBase64 } from '../connect/base64.js';
import type { EnvdConnection } from './envd-connection.js';
import type { ProcessEventWire, ProcessStreamMessageWire } from './envd-wire.js';

/** Where output goes while a process runs. */
export interface OutputHandlers {
  /** Decoded stdout text, chunk by chunk (UTF-8 sequences are never split). */
  readonly onStdout?: (text: string) => void;
  /** Decoded stderr text. */
  readonly onStderr?: (text: string) => void;
  /** Raw bytes of every stream, for binary-safe copying (`pty` for terminals). */
  readonly onOutput?: (stream: 'stdout' | 'stderr' | 'pty', bytes: Uint8Array) => void;
  /** Keep the output for `wait()`'s result. @default true */
  readonly collect?: boolean;
}

/** The stream and controls a handle is made of. */
export interface HandleParts {
  readonly pid: number;
  readonly events: AsyncGenerator<ProcessStreamMessageWire>;
  readonly abort: AbortController;
  readonly connection: EnvdConnection;
}

/** A process started or connected to. */
export class CommandHandle {
  /** The process id inside the sandbox. */
  readonly pid: number;
  readonly #parts: HandleParts;
  readonly #handlers: OutputHandlers;
  readonly #decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  #stdout = '';
  #stderr = '';
  readonly #result: Promise<CommandResult>;

  constructor(parts: HandleParts, handlers: OutputHandlers = {}) {
    this.pid = parts.pid;
    this.#parts = parts;
    this.#handlers = handlers;
    this.#result = this.#pump();
    // wait() reports failures; a handle nobody waits for must not crash the process.
    this.#result.catch(() => undefined);
  }

  /** Output collected so far. */
  get stdout(): string {
    return this.#stdout;
  }

  /** Error output collected so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /**
   * Waits for the process to end.
   * @throws {CommandExitError} when it exits with a non-zero code.
   */
  async wait(): Promise<CommandResult> {
    const result = await this.#result;
    if (result.exitCode !== 0) throw new CommandExitError(result);
    return result;
  }

  /** Waits for the process to end and returns its result whatever its exit code. */
  result(): Promise<CommandResult> {
    return this.#result;
  }

  /** Stops following the output; the process keeps running. */
  disconnect(): void {
    this.#parts.abort.abort(
      new AenvSdkError('disconnected from the process', { code: 'SDK_CANCELED' }),
    );
  }

  /** Sends SIGKILL to the process; false when it was already gone. */
  kill(): Promise<boolean> {
    return killProcess(this.#parts.connection, this.pid);
  }

  /** Writes to the process's stdin (started with `stdin: true`). */
  async sendStdin(data: string | Uint8Array): Promise<void> {
    await sendInput(this.#parts.connection, this.pid, { stdin: data });
  }

  /** Closes the process's stdin (EOF). */
  async closeStdin(): Promise<void> {
    await this.#parts.connection.rpc.unary('process.Process/CloseStdin', {
      process: { pid: this.pid },
    });
  }

  async #pump(): Promise<CommandResult> {
    let end: ProcessEventWire['end'];
    for await (const message of this.#parts.events) {
      const event = message.event;
      if (event?.data !== undefined) this.#onData(event.data);
      else if (event?.end !== undefined) end = event.end;
    }
    if (end === undefined) throw new InternalError('the process stream ended without an end event');
    this.#flush();
    return {
      exitCode: end.exitCode ?? 0,
      stdout: this.#stdout,
      stderr: this.#stderr,
      error: end.error,
    };
  }

  #onData(data: NonNullable<ProcessEventWire['data']>): void {
    for (const stream of ['stdout', 'stderr', 'pty'] as const) {
      const text = data[stream];
      if (text === undefined) continue;
      const bytes = fromBase64(text);
      this.#handlers.onOutput?.(stream, bytes);
      if (stream !== 'pty')
        this.#text(stream, this.#decoders[stream].decode(bytes, { stream: true }));
    }
  }

  #text(stream: 'stdout' | 'stderr', text: string): void {
    if (text === '') return;
    if (this.#handlers.collect !== false) {
      if (stream === 'stdout') this.#stdout += text;
      else this.#stderr += text;
    }
    if (stream === 'stdout') this.#handlers.onStdout?.(text);
    else this.#handlers.onStderr?.(text);
  }

  #flush(): void {
    this.#text('stdout', this.#decoders.stdout.decode());
    this.#text('stderr', this.#decoders.stderr.decode());
  }
}

/** `SendSignal(SIGKILL)`; false when the process does not exist. */
export async function killProcess(connection: EnvdConnection, pid: number): Promise<boolean> {
  try {
    await connection.rpc.unary('process.Process/SendSignal', {
      process: { pid },
      signal: 'SIGNAL_SIGKILL',
    });
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

/** `SendInput` of stdin or PTY bytes. */
export async function sendInput(
  connection: EnvdConnection,
  pid: number,
  input: { stdin: string | Uint8Array } | { pty: string | Uint8Array },
): Promise<void> {
  const [field, data] = 'stdin' in input ? ['stdin', input.stdin] : ['pty', input.pty];
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  await connection.rpc.unary('process.Process/SendInput', {
    process: { pid },
    input: { [field]: toBase64(bytes) },
  });
}
