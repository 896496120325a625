/**
 * A VM run by the qemu driver: the {@link Vm} lifecycle over one
 * {@link QemuInstance}.
 *
 * Concurrency: every operation first moves the state machine into a
 * transient state, so overlapping calls fail fast with `VMM_INVALID_STATE`;
 * `stop()` is the exception, allowed from any state and idempotent (later
 * calls share the first one's promise). When the QEMU process ends for any
 * reason the VM becomes `stopped` and `wait()` resolves with why.
 *
 * @module
 */
import type { SnapshotManifest } from '../snapshot-manifest.js';
import type { ConsoleWaitOptions, ExitInfo, ExitReason, SnapshotTarget, Vm } from '../driver.js';
import { publishExit, publishOp, type VmmEvent, type VmmOp } from '../events.js';
import { VmStateMachine, type VmState } from '../vm-state.js';
import type { QemuIdentity, QemuMachine } from './qemu-args.js';
import type { QemuInstance } from './qemu-instance.js';
import { saveSnapshot, type RamLayout } from './qemu-snapshot.js';

function isEvent(v: unknown): v is VmmEvent {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Default of `stop({ graceMs })`. */
export const DEFAULT_STOP_GRACE_MS = 3000;

/** What a {@link QemuVm} is made of. */
export interface QemuVmInit {
  readonly id: string;
  readonly instance: QemuInstance;
  readonly machine: QemuMachine;
  /** How guest RAM is backed. */
  readonly ram: RamLayout;
  /** The run directory (sockets, RAM file). */
  readonly runDir: string;
  /** The user QEMU runs as, when not this process's. */
  readonly qemuUser?: QemuIdentity;
  readonly vmmVersion: string;
  readonly serialLog: string;
  readonly initialState: VmState;
}

/** See the module comment. */
export class QemuVm implements Vm {
  readonly id: string;
  readonly driver = 'qemu' as const;
  readonly serialLog: string;
  readonly #init: QemuVmInit;
  readonly #sm: VmStateMachine;
  readonly #exit: Promise<ExitInfo>;
  #endReason: ExitReason | undefined;
  #stopping: Promise<ExitInfo> | undefined;

  constructor(init: QemuVmInit) {
    this.id = init.id;
    this.serialLog = init.serialLog;
    this.#init = init;
    this.#sm = new VmStateMachine(init.id, init.initialState);
    // decided when the process ends (before the instance's async cleanup), so
    // a stop() racing with an unexpected exit does not relabel it 'stop'
    let reason: ExitReason = 'crash';
    void init.instance.process.exited.then(() => {
      reason = this.#endReason ?? (init.instance.guestShutdown !== undefined ? 'guest' : 'crash');
      this.#sm.to('stopped');
    });
    this.#exit = init.instance.ended.then((exit) => {
      const info: ExitInfo = {
        reason,
        code: exit.code,
        signal: exit.signal,
        ...(reason === 'crash' ? { message: init.instance.process.stderrTail().trim() } : {}),
      };
      publishExit(this.#source(), reason, { code: exit.code, signal: exit.signal });
      return info;
    });
  }

  get state(): VmState {
    return this.#sm.state;
  }

  get pid(): number | undefined {
    return this.#init.instance.process.exit === undefined
      ? this.#init.instance.process.pid
      : undefined;
  }

  /** Moves from `starting` to `running` once the guest executes (driver use). */
  markStarted(): void {
    this.#sm.to('running');
  }

  async pause(): Promise<void> {
    this.#sm.expect('pause', 'running');
    await this.#transition('pause', 'pausing', 'paused', 'running', async () => {
      await this.#init.instance.qmp.execute('stop');
    });
  }

  async resume(): Promise<void> {
    this.#sm.expect('resume', 'paused');
    await this.#transition('resume', 'resuming', 'running', 'paused', async () => {
      await this.#init.instance.qmp.execute('cont');
    });
  }

  async snapshot(to: SnapshotTarget): Promise<SnapshotManifest> {
    this.#sm.expect('snapshot', 'paused');
    const after = to.after ?? 'stop';
    if (after === 'stop') this.#endReason = 'snapshot';
    let manifest: SnapshotManifest | undefined;
    await this.#transition(
      'snapshot',
      'snapshotting',
      after === 'stop' ? 'stopped' : 'paused',
      'paused',
      async () => {
        manifest = await saveSnapshot({ ...this.#init, after }, to.dir);
        if (after === 'stop') await this.#exit;
        return { 'snapshot.dir': to.dir, bytes: manifest.memory.diff?.bytes ?? 0 };
      },
    );
    return manifest as SnapshotManifest;
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
      this.#sm.to('stopping');
      await this.#init.instance.quit(graceMs);
    }
    const info = await this.#exit;
    publishOp('stop', this.#source(), started, undefined, { reason: info.reason });
    return info;
  }

  /**
   * Runs one operation: into `during`, then `success`; on failure back to
   * `failure` (unless the VM ended meanwhile), then rethrows.
   */
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
      const extra = await action();
      if (this.#sm.state === during) this.#sm.to(success);
      publishOp(op, this.#source(), started, undefined, isEvent(extra) ? extra : {});
    } catch (err) {
      if (this.#sm.state === during) this.#sm.to(failure);
      if (this.#endReason === 'snapshot' && this.#sm.state !== 'stopped')
        this.#endReason = undefined;
      publishOp(op, this.#source(), started, err);
      throw err;
    }
  }

  /** The RAM layout (`own` for booted VMs, `base` for restored ones). */
  get ram(): RamLayout {
    return this.#init.ram;
  }

  #source(): { id: string; driver: string; pid: number | undefined } {
    return { id: this.id, driver: this.driver, pid: this.#init.instance.process.pid };
  }
}
