/**
 * One running QEMU: the process, its QMP connection, its serial console and
 * the files it owns in the run directory.
 *
 * Contract:
 * - `launch` either returns an instance whose QMP and console are attached,
 *   or leaves nothing behind: a half-started QEMU is killed and its sockets
 *   and pid file are removed before the error is thrown;
 * - `ended` resolves (never rejects) after the process has exited AND its
 *   owned files are removed and the console is closed, so "wait() returned"
 *   means "nothing is left";
 * - a `SHUTDOWN` event from the guest is remembered, so the owner can tell a
 *   guest power-off from a crash.
 *
 * @module
 */
import { rm } from 'node:fs/promises';
import { AenvError } from '@aenv/shared';
import { buildQemuArgs, qemuCommand, type QemuIdentity, type QemuLaunch } from './qemu-args.js';
import type { QemuJail } from './qemu-jail.js';
import { QemuProcess, type ProcessExit } from './qemu-process.js';
import { QmpClient } from './qmp-client.js';
import { SerialConsole } from './serial-console.js';

/** What {@link QemuInstance.launch} needs. */
export interface InstanceOptions {
  readonly binary: string;
  readonly launch: QemuLaunch;
  readonly netns?: string;
  /** See `QemuCommandOptions.killWithParent`. @default true */
  readonly killWithParent?: boolean;
  /** Run QEMU as this user (see `qemuCommand`). */
  readonly user?: QemuIdentity;
  /**
   * Run QEMU in this jail (instead of `user`); the instance releases it once
   * QEMU has exited, also when the launch fails.
   */
  readonly jail?: QemuJail;
  /** Added to QEMU's environment (the private-RAM interposer). */
  readonly env?: Record<string, string>;
  readonly serialLog: string;
  readonly serialLogMaxBytes?: number;
  /** Extra files the instance owns from the start (e.g. its memory file). */
  readonly ownedFiles?: readonly string[];
  readonly signal?: AbortSignal;
}

async function removeFiles(paths: Iterable<string>): Promise<void> {
  await Promise.all([...paths].map((p) => rm(p, { force: true })));
}

function command(options: InstanceOptions): [string, string[]] {
  const killWithParent = options.killWithParent ?? true;
  const netns = options.netns === undefined ? {} : { netns: options.netns };
  const { jail, launch } = options;
  if (jail === undefined) {
    const user = options.user === undefined ? {} : { user: options.user };
    return qemuCommand(options.binary, buildQemuArgs(launch), {
      killWithParent,
      ...netns,
      ...user,
    });
  }
  const tap = launch.machine.network?.tap;
  return jail.command(options.binary, buildQemuArgs(launch), {
    killWithParent,
    ...netns,
    ...(tap === undefined ? {} : { tap }),
  });
}

/** See the module comment. */
export class QemuInstance {
  readonly process: QemuProcess;
  readonly qmp: QmpClient;
  readonly console: SerialConsole;
  readonly ended: Promise<ProcessExit>;
  readonly #owned: Set<string>;
  #guestShutdown: string | undefined;

  private constructor(
    proc: QemuProcess,
    qmp: QmpClient,
    console: SerialConsole,
    owned: Set<string>,
    jail: QemuJail | undefined,
  ) {
    this.process = proc;
    this.qmp = qmp;
    this.console = console;
    this.#owned = owned;
    qmp.onEvent((e) => {
      if (e.event === 'SHUTDOWN' && e.data.guest === true)
        this.#guestShutdown = String(e.data.reason);
    });
    this.ended = proc.exited.then(async (exit) => {
      qmp.close();
      console.fail(
        new AenvError('VMM_PROCESS_EXITED', `the VMM process ${proc.deathReason() ?? 'exited'}`, {
          fields: { 'vm.pid': proc.pid },
        }),
      );
      console.detach();
      await removeFiles(this.#owned).catch(() => undefined);
      await jail?.release().catch(() => undefined);
      return exit;
    });
  }

  /**
   * Spawns QEMU and attaches QMP and the console.
   * @throws {AenvError} `VMM_START_FAILED` (with QEMU's stderr), `VMM_TIMEOUT`.
   */
  static async launch(options: InstanceOptions): Promise<QemuInstance> {
    const { launch } = options;
    const owned = new Set([
      launch.qmpSocket,
      launch.serialSocket,
      launch.pidFile,
      ...(options.ownedFiles ?? []),
    ]);
    await removeFiles([launch.qmpSocket, launch.serialSocket, launch.pidFile]);
    const [program, args] = command(options);
    const proc = QemuProcess.spawn(program, args, options.env);
    let qmp: QmpClient | undefined;
    try {
      qmp = await QmpClient.connect(launch.qmpSocket, {
        abortIf: () => proc.deathReason(),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      const console = await SerialConsole.attach(
        launch.serialSocket,
        options.serialLog,
        options.serialLogMaxBytes,
      );
      return new QemuInstance(proc, qmp, console, owned, options.jail);
    } catch (err) {
      qmp?.close();
      proc.kill('SIGKILL');
      await proc.exited;
      await removeFiles(owned);
      await options.jail?.release().catch(() => undefined);
      const died = proc.deathReason();
      if (err instanceof AenvError && err.code === 'VMM_START_FAILED') throw err;
      if (died !== undefined && !(options.signal?.aborted ?? false)) {
        throw new AenvError('VMM_START_FAILED', `QEMU ${died}`, { cause: err });
      }
      throw err;
    }
  }

  /** The guest's SHUTDOWN reason (`guest-shutdown`, `guest-reset`, ...), if the guest ended itself. */
  get guestShutdown(): string | undefined {
    return this.#guestShutdown;
  }

  /** Stops owning `path` (it was moved into a snapshot). */
  disown(path: string): void {
    this.#owned.delete(path);
  }

  /** Asks QEMU to quit; kills it after `graceMs`. Resolves once {@link ended}. */
  async quit(graceMs: number): Promise<ProcessExit> {
    if (this.process.exit !== undefined) return this.ended;
    const killer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    try {
      if (graceMs > 0) await this.qmp.execute('quit', undefined, graceMs);
      else this.process.kill('SIGKILL');
    } catch {
      // the socket closes as QEMU exits, or QMP is wedged: the timer kills it
    }
    const exit = await this.ended;
    clearTimeout(killer);
    return exit;
  }
}
