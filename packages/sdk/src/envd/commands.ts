/**
 * `sandbox.commands`: run commands in a sandbox through envd's
 * `process.Process` service, as the e2b SDK does (`/bin/bash -l -c <cmd>`,
 * output streamed, a non-zero exit is a `CommandExitError`), plus
 * re-attaching to running processes, listing and killing them, and stdin.
 *
 * @module
 */
import type { RequestOptions } from '../api/http.js';
import { InternalError } from '../errors.js';
import type { CommandResult } from '../errors.js';
import { CommandHandle, killProcess, sendInput, type OutputHandlers } from './command-handle.js';
import { userHeader, type EnvdConnection } from './envd-connection.js';
import type { ListResponseWire, ProcessStreamMessageWire, StartRequestWire } from './envd-wire.js';

/** The default lifetime of a command, as in the e2b SDK. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

/** How to run a command. */
export interface RunOptions extends OutputHandlers {
  /** Environment variables added to the sandbox's. */
  readonly envs?: Readonly<Record<string, string>>;
  /** Working directory; relative paths are from the user's home. */
  readonly cwd?: string;
  /** The user to run as (default: the sandbox's default user). */
  readonly user?: string;
  /** The process's lifetime in ms; 0 = unlimited. @default 60000 */
  readonly timeoutMs?: number;
  /** Give the process a stdin pipe (else stdin is empty). @default false */
  readonly stdin?: boolean;
  /** Detaches from the process (it keeps running). */
  readonly signal?: AbortSignal;
}

/** A process running in the sandbox. */
export interface ProcessInfo {
  readonly pid: number;
  readonly tag: string | undefined;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly envs: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
}

/** Starts a `Start` or `Connect` stream and waits for its `start` event. */
export async function attachProcess(
  connection: EnvdConnection,
  call: { method: 'Start' | 'Connect'; request: unknown; user?: string | undefined },
  options: Pick<RunOptions, 'signal' | 'timeoutMs'>,
  handlers: OutputHandlers,
): Promise<CommandHandle> {
  const abort = new AbortController();
  const detach = (): void => abort.abort(options.signal?.reason);
  if (options.signal?.aborted === true) detach();
  options.signal?.addEventListener('abort', detach, { once: true });
  const events = connection.rpc.stream<ProcessStreamMessageWire>(
    `process.Process/${call.method}`,
    call.request,
    {
      signal: abort.signal,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      headers: userHeader(call.user),
    },
  );
  const first = await events.next();
  const pid = first.done === true ? undefined : first.value.event?.start?.pid;
  if (pid === undefined) {
    await events.return(undefined);
    throw new InternalError(`process.Process/${call.method}: the first event was not 'start'`);
  }
  return new CommandHandle({ pid, events, abort, connection }, handlers);
}

/** Runs commands in one sandbox. */
export class Commands {
  readonly #connection: EnvdConnection;

  constructor(connection: EnvdConnection) {
    this.#connection = connection;
  }

  /**
   * Runs `cmd` with `/bin/bash -l -c`. Without `background` it waits and
   * resolves with the result; with `background: true` it resolves with a
   * handle as soon as the process started.
   * @throws {CommandExitError} (foreground) when it exits with a non-zero code.
   */
  run(cmd: string, options: RunOptions & { background: true }): Promise<CommandHandle>;
  run(cmd: string, options?: RunOptions & { background?: false }): Promise<CommandResult>;
  async run(
    cmd: string,
    options: RunOptions & { background?: boolean } = {},
  ): Promise<CommandHandle | CommandResult> {
    const request: StartRequestWire = {
      process: {
        cmd: '/bin/bash',
        args: ['-l', '-c', cmd],
        ...(options.envs === undefined ? {} : { envs: options.envs }),
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      },
      stdin: options.stdin ?? false,
    };
    const handle = await attachProcess(
      this.#connection,
      { method: 'Start', request, user: options.user },
      { ...options, timeoutMs: options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS },
      options,
    );
    return options.background === true ? handle : handle.wait();
  }

  /** Re-attaches to a running process: its new output and its end. */
  connect(
    pid: number,
    options: OutputHandlers & { signal?: AbortSignal } = {},
  ): Promise<CommandHandle> {
    return attachProcess(
      this.#connection,
      { method: 'Connect', request: { process: { pid } } },
      options,
      options,
    );
  }

  /** The processes running in the sandbox. */
  async list(options: RequestOptions = {}): Promise<ProcessInfo[]> {
    const res = await this.#connection.rpc.unary<ListResponseWire>(
      'process.Process/List',
      {},
      options,
    );
    return (res.processes ?? []).map((p) => ({
      pid: p.pid ?? 0,
      tag: p.tag,
      cmd: p.config?.cmd ?? '',
      args: p.config?.args ?? [],
      envs: p.config?.envs ?? {},
      cwd: p.config?.cwd,
    }));
  }

  /** Sends SIGKILL to a process; false when there is no such process. */
  kill(pid: number): Promise<boolean> {
    return killProcess(this.#connection, pid);
  }

  /** Writes to a process's stdin. */
  sendStdin(pid: number, data: string | Uint8Array): Promise<void> {
    return sendInput(this.#connection, pid, { stdin: data });
  }

  /** Closes a process's stdin. */
  async closeStdin(pid: number): Promise<void> {
    await this.#connection.rpc.unary('process.Process/CloseStdin', { process: { pid } });
  }
}
