/**
 * One running Firecracker: the process, its API client, the guest console,
 * its telemetry, and the host resources it owns (jail, NBD devices, FIFOs,
 * sockets), released when it ends.
 *
 * Contract:
 * - `launch` takes over a {@link Cleanup} holding every resource acquired
 *   for the VMM, and either returns an instance whose API answers, or kills
 *   the process, releases those resources and throws;
 * - `ended` resolves (never rejects) after the process has exited AND its
 *   resources are released and the console closed, so "wait() returned"
 *   means "nothing is left".
 *
 * @module
 */
import { closeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { AenvError, type Cleanup } from '@aenv/shared';
import { FirecrackerApiClient } from './api-client.js';
import {
  FirecrackerProcess,
  firecrackerCommand,
  type CommandSpec,
  type ProcessExit,
} from './firecracker-process.js';
import { StreamConsole } from './stream-console.js';
import type { VmmTelemetry } from './vmm-telemetry.js';

/** What {@link FirecrackerInstance.launch} needs. */
export interface LaunchOptions {
  readonly command: CommandSpec;
  /** Descriptors the VMM inherits as 3, 4, ...; closed here once spawned. */
  readonly fds: readonly number[];
  readonly telemetry: VmmTelemetry;
  readonly serialLog: string;
  readonly serialLogMaxBytes?: number;
  readonly apiTimeoutMs?: number;
  /** Resources to release when the VMM ends (or the launch fails). */
  readonly resources: Cleanup;
  readonly signal?: AbortSignal;
}

/** See the module comment. */
export class FirecrackerInstance {
  readonly process: FirecrackerProcess;
  readonly api: FirecrackerApiClient;
  readonly console: StreamConsole;
  readonly telemetry: VmmTelemetry;
  readonly ended: Promise<ProcessExit>;

  private constructor(
    proc: FirecrackerProcess,
    api: FirecrackerApiClient,
    console: StreamConsole,
    options: LaunchOptions,
  ) {
    this.process = proc;
    this.api = api;
    this.console = console;
    this.telemetry = options.telemetry;
    this.ended = proc.exited.then(async (exit) => {
      console.fail(
        new AenvError('VMM_PROCESS_EXITED', `the VMM process ${proc.deathReason() ?? 'exited'}`, {
          fields: { 'vm.pid': proc.pid },
        }),
      );
      console.close();
      await options.resources.run().catch(() => undefined);
      return exit;
    });
  }

  /**
   * Spawns Firecracker and waits for its API.
   * @throws {AenvError} `VMM_START_FAILED` (with its stderr), `VMM_TIMEOUT`.
   */
  static async launch(options: LaunchOptions): Promise<FirecrackerInstance> {
    const { command } = options;
    await rm(command.layout.apiSocket.host, { force: true });
    const [program, args] = firecrackerCommand(command);
    const proc = FirecrackerProcess.spawn(program, args, options.fds);
    for (const fd of options.fds) closeSync(fd);
    const console = new StreamConsole(proc.stdout, options.serialLog, options.serialLogMaxBytes);
    options.resources.add('api socket', () => rm(command.layout.apiSocket.host, { force: true }));
    try {
      const api = await FirecrackerApiClient.connect(command.layout.apiSocket.host, {
        abortIf: () => proc.deathReason(),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.apiTimeoutMs === undefined ? {} : { requestTimeoutMs: options.apiTimeoutMs }),
      });
      return new FirecrackerInstance(proc, api, console, options);
    } catch (err) {
      proc.kill('SIGKILL');
      await proc.exited;
      console.close();
      await options.resources.run().catch(() => undefined);
      const died = proc.deathReason();
      if (err instanceof AenvError && err.code === 'VMM_START_FAILED') throw err;
      if (died !== undefined && !(options.signal?.aborted ?? false)) {
        throw new AenvError('VMM_START_FAILED', `firecracker ${died}`, { cause: err });
      }
      throw err;
    }
  }

  /**
   * Ends the VMM: SIGTERM, then SIGKILL after `graceMs` (0: at once).
   * Firecracker has no "quit" request; the guest's own shutdown would be
   * `SendCtrlAltDel`, which a paused or wedged guest ignores. Resolves once
   * {@link ended}.
   */
  async quit(graceMs: number): Promise<ProcessExit> {
    if (this.process.exit !== undefined) return this.ended;
    if (graceMs <= 0) this.process.kill('SIGKILL');
    else this.process.kill('SIGTERM');
    const killer = setTimeout(() => this.process.kill('SIGKILL'), Math.max(graceMs, 0));
    const exit = await this.ended;
    clearTimeout(killer);
    return exit;
  }
}
