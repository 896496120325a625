/**
 * The VM lifecycle as an explicit state machine (style R9).
 *
 * ```
 * starting ─► running ─► pausing ─► paused ─► resuming ─► running
 *                                    paused ─► snapshotting ─► paused | stopped
 * any but stopped ─► stopping ─► stopped        any ─► stopped (the VMM died)
 * ```
 * The transient states (`pausing`, `resuming`, `snapshotting`, `stopping`)
 * hold while a VMM command is in flight, so a concurrent operation fails with
 * `VMM_INVALID_STATE` naming the state instead of interleaving. A failed
 * pause/resume/snapshot returns to the state it started from.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** The states of a VM. */
export const VM_STATES = [
  'starting',
  'running',
  'pausing',
  'paused',
  'resuming',
  'snapshotting',
  'stopping',
  'stopped',
] as const;

/** One of {@link VM_STATES}. */
export type VmState = (typeof VM_STATES)[number];

/** Allowed transitions: state → states it may move to. */
export const VM_TRANSITIONS: Readonly<Record<VmState, readonly VmState[]>> = {
  starting: ['running', 'paused', 'stopping', 'stopped'],
  running: ['pausing', 'stopping', 'stopped'],
  pausing: ['paused', 'running', 'stopping', 'stopped'],
  paused: ['resuming', 'snapshotting', 'stopping', 'stopped'],
  resuming: ['running', 'paused', 'stopping', 'stopped'],
  snapshotting: ['paused', 'stopping', 'stopped'],
  stopping: ['stopped'],
  stopped: [],
};

/** Holds one VM's state and enforces {@link VM_TRANSITIONS}. */
export class VmStateMachine {
  #state: VmState;
  readonly #vmId: string;

  constructor(vmId: string, initial: VmState = 'starting') {
    this.#vmId = vmId;
    this.#state = initial;
  }

  /** The current state. */
  get state(): VmState {
    return this.#state;
  }

  /**
   * Checks that `op` may start from the current state.
   * @throws {AenvError} `VMM_INVALID_STATE` naming the operation and the state.
   */
  expect(op: string, ...allowed: VmState[]): void {
    if (allowed.includes(this.#state)) return;
    throw new AenvError(
      'VMM_INVALID_STATE',
      `cannot ${op} VM ${this.#vmId}: it is ${this.#state} (needs ${allowed.join(' or ')})`,
      { fields: { 'sandbox.id': this.#vmId, state: this.#state, op } },
    );
  }

  /**
   * Moves to `next`.
   * @throws {AenvError} `INTERNAL` for a transition the table does not allow (a bug).
   */
  to(next: VmState): void {
    if (next === this.#state) return;
    if (!VM_TRANSITIONS[this.#state].includes(next)) {
      throw new AenvError(
        'INTERNAL',
        `VM ${this.#vmId}: illegal transition ${this.#state} → ${next}`,
      );
    }
    this.#state = next;
  }
}
