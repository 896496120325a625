/**
 * A qemu restore prepared ahead of need ({@link PreparedRestore}): QEMU runs
 * with `-incoming defer`, its RAM mapping in place (the snapshot's base
 * file mapped copy-on-write, the RAM diff already written into it), QMP and
 * the serial console attached, and the snapshot's device state read into
 * memory. `complete()` streams the device state in (`migrate-incoming`),
 * continues the guest and hands over a {@link QemuVm} under the id the
 * caller names. The snapshot directory is not needed any more once
 * prepared: the base RAM is a hard link in the run directory and the device
 * state is held here, so a template rebuilt meanwhile cannot break it.
 *
 * Every plain restore is a prepare followed at once by a complete, so this
 * path is the one every restore takes.
 *
 * States: `waiting → completing → completed`, `waiting → cancelled`,
 * `waiting → ended` (the process died), `completing → ended` (completion
 * failed; the VMM is killed).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type {
  CompleteRestoreOptions,
  PreparedRestore,
  PreparedRestoreState,
  RestoreSpec,
  SnapshotRef,
  Vm,
} from '../driver.js';
import { publishOp } from '../events.js';
import { validateVmId } from '../vm-spec.js';
import { loadDeviceState } from './migration-channel.js';
import type { QemuInstance } from './qemu-instance.js';
import type { QemuVm } from './qemu-vm.js';
import { finishStart } from './start-steps.js';

/** What a prepared restore is made of. */
export interface QemuPreparedParts {
  readonly instance: QemuInstance;
  readonly spec: RestoreSpec;
  readonly snapshot: SnapshotRef;
  /** The snapshot's device state (the `vmstate` file's bytes). */
  readonly deviceState: Buffer;
  /** Wraps the instance into a VM with the given id. */
  readonly makeVm: (id: string) => QemuVm;
  /** Publish the `restore` event on completion (false when `restore()` publishes its own). */
  readonly publish: boolean;
}

/** See the module comment. */
export class QemuPreparedRestore implements PreparedRestore {
  readonly id: string;
  readonly snapshot: SnapshotRef;
  readonly ended: Promise<void>;
  readonly #p: QemuPreparedParts;
  #state: PreparedRestoreState = 'waiting';
  #cancelling: Promise<void> | undefined;

  constructor(parts: QemuPreparedParts) {
    this.#p = parts;
    this.id = parts.spec.id;
    this.snapshot = parts.snapshot;
    this.ended = new Promise((resolve) => {
      void parts.instance.process.exited.then(() => {
        if (this.#state !== 'waiting' && this.#state !== 'cancelled') return;
        if (this.#state === 'waiting') this.#state = 'ended';
        resolve();
      });
    });
  }

  get state(): PreparedRestoreState {
    return this.#state;
  }

  get pid(): number | undefined {
    const { process } = this.#p.instance;
    return this.#state === 'waiting' && process.exit === undefined ? process.pid : undefined;
  }

  async complete(options: CompleteRestoreOptions = {}): Promise<Vm> {
    const started = performance.now();
    const id = options.id ?? this.id;
    validateVmId(id);
    this.#expectWaiting();
    this.#state = 'completing';
    const { instance, spec, deviceState } = this.#p;
    const vm = this.#p.makeVm(id);
    try {
      await finishStart(vm, instance, options.signal, 'VMM_RESTORE_FAILED', async (inst) => {
        if (inst.process.exit !== undefined) {
          throw new AenvError(
            'VMM_PROCESS_EXITED',
            `the waiting VMM ${inst.process.deathReason()}`,
          );
        }
        await loadDeviceState(inst.qmp, spec.runDir, deviceState);
        await inst.qmp.execute('cont');
      });
    } catch (err) {
      this.#state = 'ended';
      if (this.#p.publish) this.#publish(id, started, err);
      throw err;
    }
    this.#state = 'completed';
    if (this.#p.publish) this.#publish(id, started);
    return vm;
  }

  cancel(): Promise<void> {
    if (this.#state === 'completing' || this.#state === 'completed') return Promise.resolve();
    this.#cancelling ??= (async () => {
      if (this.#state === 'waiting') this.#state = 'cancelled';
      await this.#p.instance.quit(0);
    })();
    return this.#cancelling;
  }

  #expectWaiting(): void {
    if (this.#state === 'waiting' && this.#p.instance.process.exit === undefined) return;
    const state = this.#state === 'waiting' ? 'ended' : this.#state;
    throw new AenvError(
      'VMM_INVALID_STATE',
      `cannot complete the prepared restore ${this.id}: it is ${state} (needs waiting)`,
      { fields: { 'sandbox.id': this.id, state, op: 'complete' } },
    );
  }

  #publish(id: string, started: number, err?: unknown): void {
    publishOp('restore', { id, driver: 'qemu', pid: this.#p.instance.process.pid }, started, err, {
      'snapshot.dir': this.snapshot.dir,
      prepared: true,
    });
  }
}
