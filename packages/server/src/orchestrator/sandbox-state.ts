/**
 * The sandbox lifecycle as one explicit state machine: the states, the
 * transition table, and the check every operation makes before it starts.
 * `docs/lifecycle.md` draws the same table.
 *
 * Transient states (`creating`, `pausing`, `resuming`, `snapshotting`,
 * `forking`, `killing`) last while one operation runs; the per-sandbox
 * operation queue (`operation-queue.ts`) guarantees only one runs at a time.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Every state a sandbox can be in. */
export const SANDBOX_STATES = [
  'creating',
  'running',
  'pausing',
  'paused',
  'resuming',
  'snapshotting',
  'forking',
  'killing',
  'killed',
  'failed',
] as const;

/** One of {@link SANDBOX_STATES}. */
export type SandboxState = (typeof SANDBOX_STATES)[number];

/**
 * The transition table: for each state, the states it may move to.
 * A failed pause or resume returns to where it came from (the VM or the
 * snapshot is intact); `failed` means the machine is gone unexpectedly and
 * only a kill (cleanup) may follow.
 */
export const SANDBOX_TRANSITIONS: Readonly<Record<SandboxState, readonly SandboxState[]>> = {
  creating: ['running', 'failed', 'killing'],
  running: ['pausing', 'snapshotting', 'forking', 'killing', 'failed'],
  pausing: ['paused', 'running', 'failed'],
  paused: ['resuming', 'killing'],
  resuming: ['running', 'paused', 'failed'],
  snapshotting: ['running', 'failed'],
  forking: ['running', 'failed'],
  killing: ['killed'],
  killed: [],
  failed: ['killing'],
};

/** The operations users start, and the states each may start from. */
export const OPERATION_SOURCES = {
  pause: ['running'],
  resume: ['paused'],
  snapshot: ['running'],
  fork: ['running'],
  kill: ['creating', 'running', 'paused', 'failed'],
  exec: ['running'],
} as const satisfies Record<string, readonly SandboxState[]>;

/** An operation of {@link OPERATION_SOURCES}. */
export type SandboxOperation = keyof typeof OPERATION_SOURCES;

/** Whether `from → to` is in the table. */
export function canTransition(from: SandboxState, to: SandboxState): boolean {
  return SANDBOX_TRANSITIONS[from].includes(to);
}

/**
 * Checks that a transition is in the table.
 * @throws {AenvError} `INTERNAL` — a transition outside the table is a bug.
 */
export function assertTransition(id: string, from: SandboxState, to: SandboxState): void {
  if (!canTransition(from, to)) {
    throw new AenvError('INTERNAL', `sandbox ${id}: illegal state transition ${from} → ${to}`, {
      fields: { sandboxId: id, from, to },
    });
  }
}

/**
 * Checks that `op` may start in `state`.
 * @throws {AenvError} `SBX_INVALID_STATE` (409) naming the current state.
 */
export function assertOperation(id: string, op: SandboxOperation, state: SandboxState): void {
  const allowed: readonly SandboxState[] = OPERATION_SOURCES[op];
  if (!allowed.includes(state)) {
    throw new AenvError(
      'SBX_INVALID_STATE',
      `cannot ${op} sandbox ${id}: it is ${state} (${op} needs ${allowed.join(' or ')})`,
      { fields: { sandboxId: id, state, operation: op } },
    );
  }
}

/** States in which a sandbox is shown to clients (list/get); the others are internal. */
export function isVisible(state: SandboxState): boolean {
  return state !== 'killed' && state !== 'creating';
}

/** The E2B `state` of a visible sandbox: `running` or `paused`. */
export function e2bState(state: SandboxState): 'running' | 'paused' {
  return state === 'paused' || state === 'pausing' ? 'paused' : 'running';
}
