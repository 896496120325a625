/**
 * A VM run by the firecracker driver: the {@link Vm} lifecycle over one
 * {@link FirecrackerInstance}, plus what only Firecracker offers (balloon,
 * metrics, diff snapshots, vsock).
 *
 * Concurrency: every operation first moves the state machine into a
 * transient state, so overlapping calls fail fast with `VMM_INVALID_STATE`;
 * `stop()` is allowed from any state and idempotent. When the process ends
 * for any reason the VM becomes `stopped` and `wait()` resolves with why:
 * Firecracker exits with status 0 when the guest reboots or powers off
 * (`guest`), anything unasked-for otherwise is a `crash`.
 *
 * @module
 */
import { join } from 'node:path';
import type { ConsoleWaitOptions, ExitInfo, ExitReason, SnapshotTarget, Vm } from '../driver.js';
import { publishExit, publishOp, type VmmOp } from '../events.js';
import type { SnapshotManifest } from '../snapshot-manifest.js';
import { VmStateMachine, type VmState } from '../vm-state.js';
import type { BalloonStats } from './api-types.js';
import type { FirecrackerInstance } from './firecracker-instance.js';
import {
  checkSnapshotType,
  FC_SNAPSHOT_FILES,
  saveFcSnapshot,
  type FcVmRecord,
  type SnapshotType,
} from './firecracker-snapshot.js';
import type { FirecrackerMetrics } from './vmm-telemetry.js';
import type { Jail } from './vmm-layout.js';

/** Default of `stop({ graceMs })`. */
export const DEFAULT_STOP_GRACE_MS = 3000;

/** {@link SnapshotTarget} with Firecracker's snapshot type. */
export interface FirecrackerSnapshotTarget extends SnapshotTarget {
  /** `Full` (default) or `Diff` (see `firecracker-snapshot.ts`). */
  readonly type?: SnapshotType;
}

/** What a {@link FirecrackerVm} is made of. */
export interface FirecrackerVmInit {
  readonly id: string;
  readonly instance: FirecrackerInstance;
  readonly record: FcVmRecord;
  readonly vmmVersion: string;
  readonly serialLog: string;
  readonly drivePaths: 'fd' | 'jail';
  readonly jail: Jail | null;
  readonly trackDirtyPages: boolean;
  readonly snapshotEditor: string | undefined;
  /** Memory a diff snapshot applies to: the snapshot this VM was restored from, or null. */
  readonly base: string | null;
  /** Host path of the vsock socket, when the VM has one. */
  readonly vsockPath: string | null;
}

/** See the module comment. */
export class FirecrackerVm implements Vm {
  readonly id: string;
  readonly driver = 'firecracker' as const;
  readonly serialLog: string;
  /** Host path of the vsock device's unix socket (`CONNECT <port>\n` to reach a guest port), or null. */
  readonly vsockPath: string | null;
  readonly #init: FirecrackerVmInit;
  readonly #sm: VmStateMachine;
  readonly #exit: Promise<ExitInfo>;
  #base: string | null;
  #endReason: ExitReason | undefined;
  #stopping: Promise<ExitInfo> | undefined;

  constructor(init: FirecrackerVmInit) {
    this.id = init.id;
    this.serialLog = init.serialLog;
    this.vsockPath = init.vsockPath;
    this.#init = init;
    this.#base = init.base;
    this.#sm = new VmStateMachine(init.id, 'starting');
    const proc = init.instance.process;
    let reason: ExitReason = 'crash';
    void proc.exited.then((exit) => {
      reason = this.#endReason ?? (exit.code === 0 ? 'guest' : 'crash');
      this.#sm.to('stopped');
    });
    this.#exit = init.instance.ended.then((exit) => {
      const info: ExitInfo = {
        reason,
        code: exit.code,
        signal: exit.signal,
        ...(reason === 'crash' ? { message: crashMessage(init.instance) } : {}),
      };
      publishExit(this.#source(), reason, { code: exit.code, signal: exit.signal });
      return info;
    });
  }

  get state(): VmState {
    return this.#sm.state;
  }

  get pid(): number | undefined {
    const proc = this.#init.instance.process;
    return proc.exit === undefined ? proc.pid : undefined;
  }

  /** Moves from `starting` to `running` (driver use). */
  markStarted(): void {
    this.#sm.to('running');
  }

  async pause(): Promise<void> {
    this.#sm.expect('pause', 'running');
    await this.#transition('pause', 'pausing', 'paused', 'running', () =>
      this.#init.instance.api.patchVm('Paused'),
    );
  }

  async resume(): Promise<void> {
    this.#sm.expect('resume', 'paused');
    await this.#transition('resume', 'resuming', 'running', 'paused', () =>
      this.#init.instance.api.patchVm('Resumed'),
    );
  }

  /**
   * See {@link Vm.snapshot}; `type: 'Diff'` writes only dirtied memory.
   * @throws {AenvError} `VMM_INVALID_STATE`, `VMM_NOT_SUPPORTED`, `VMM_SNAPSHOT_FAILED`.
   */
  async snapshot(to: FirecrackerSnapshotTarget): Promise<SnapshotManifest> {
    this.#sm.expect('snapshot', 'paused');
    const after = to.after ?? 'stop';
    const ctx = {
      id: this.id,
      instance: this.#init.instance,
      record: this.#init.record,
      vmmVersion: this.#init.vmmVersion,
      drivePaths: this.#init.drivePaths,
      jail: this.#init.jail,
      type: to.type ?? 'Full',
      base: this.#base,
      snapshotEditor: this.#init.snapshotEditor,
      trackDirtyPages: this.#init.trackDirtyPages,
    };
    checkSnapshotType(ctx);
    let manifest: SnapshotManifest | undefined;
    const success = after === 'stop' ? 'stopped' : 'paused';
    await this.#transition('snapshot', 'snapshotting', success, 'paused', async () => {
      manifest = await saveFcSnapshot(ctx, to.dir);
      // later diffs are relative to this snapshot (Firecracker reset its dirty bitmap)
      this.#base = join(to.dir, FC_SNAPSHOT_FILES.memory);
      if (after === 'stop') {
        this.#endReason = 'snapshot';
        await this.#init.instance.quit(0);
        await this.#exit;
      }
    });
    return manifest as SnapshotManifest;
  }

  /**
   * Sets the balloon's target size (memory taken back from the guest).
   * @throws {AenvError} `VMM_INVALID_STATE` unless running or paused; `VMM_API_ERROR`.
   */
  async setBalloon(amountMiB: number): Promise<void> {
    this.#sm.expect('set the balloon of', 'running', 'paused');
    await this.#init.instance.api.patchBalloon(amountMiB);
  }

  /**
   * The balloon's latest statistics (the driver must enable them).
   * @throws {AenvError} `VMM_API_ERROR` when statistics are off.
   */
  balloonStats(): Promise<BalloonStats> {
    this.#sm.expect('read the balloon of', 'running', 'paused');
    return this.#init.instance.api.describeBalloonStats();
  }

  /**
   * Asks Firecracker to flush its metrics and returns them.
   * @throws {AenvError} `VMM_INVALID_STATE`, `VMM_API_ERROR`, `VMM_TIMEOUT`.
   */
  async metrics(timeoutMs = 5000): Promise<FirecrackerMetrics> {
    this.#sm.expect('read metrics of', 'running', 'paused');
    const next = this.#init.instance.telemetry.nextMetrics(timeoutMs);
    next.catch(() => undefined);
    await this.#init.instance.api.createSyncAction('FlushMetrics');
    return next;
  }

  /** The end of Firecracker's own log. */
  vmmLogTail(): string {
    return this.#init.instance.telemetry.logTail();
  }

  stop(opts: { readonly graceMs?: number } = {}): Promise<ExitInfo> {
    this.#stopping ??= this.#stop(opts.graceMs ?? DEFAULT_STOP_GRACE_MS);
    return this.#stopping;
  }

  wait(): Promise<ExitInfo> {
    return this.#exit;
  }

  consoleTail(): string {
    return this.#init.instance.console.tail();
  }

  waitForConsole(pattern: RegExp, opts?: ConsoleWaitOptions): Promise<string> {
    return this.#init.instance.console.waitFor(pattern, opts);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  async #stop(graceMs: number): Promise<ExitInfo> {
    const started = performance.now();
    if (this.#sm.state !== 'stopped') {
      this.#endReason ??= 'stop';
      if (this.#sm.state !== 'stopping') this.#sm.to('stopping');
      await this.#init.instance.quit(graceMs);
    }
    const info = await this.#exit;
    publishOp('stop', this.#source(), started, undefined, { reason: info.reason });
    return info;
  }

  /** Runs one operation: into `during`, then `success`; on failure back to `failure`. */
  async #transition(
    op: VmmOp,
    during: VmState,
    success: VmState,
    failure: VmState,
    action: () => Promise<unknown>,
  ): Promise<void> {
    const started = performance.now();
    this.#sm.to(during);
    try {
      await action();
      if (this.#sm.state === during) this.#sm.to(success);
      publishOp(op, this.#source(), started);
    } catch (err) {
      if (this.#sm.state === during) this.#sm.to(failure);
      publishOp(op, this.#source(), started, err);
      throw err;
    }
  }

  #source(): { id: string; driver: string; pid: number | undefined } {
    return { id: this.id, driver: this.driver, pid: this.#init.instance.process.pid };
  }
}

function crashMessage(instance: FirecrackerInstance): string {
  const stderr = instance.process.stderrTail().trim();
  const log = instance.telemetry.logTail().trim().split('\n').slice(-5).join('\n');
  return [stderr, log].filter((s) => s !== '').join('\n');
}
