/**
 * Capturing a running sandbox into a snapshot — a named user snapshot or
 * the source of a fork — while its machine runs on: the sandbox is
 * `snapshotting`/`forking` only for the capture and `running` again after
 * it, whatever the outcome. The orchestrator calls this inside the
 * sandbox's operation queue.
 *
 * @module
 */
import { AenvError, toAenvError } from '@aenv/shared';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import { crashPoint } from './crash-point.js';
import { assertAlive, errorCode } from './sandbox-helpers.js';
import type { SandboxEntry } from './sandbox-entry.js';
import { snapshotOf } from './sandbox-source.js';
import { assertOperation, type SandboxState } from './sandbox-state.js';

/** What a checkpoint uses of the orchestrator. */
export interface CheckpointDeps {
  readonly snapshots: SnapshotCatalog;
  readonly metrics?: NodeMetrics | undefined;
  /** The orchestrator's checked state transition. */
  readonly transition: (entry: SandboxEntry, to: SandboxState) => void;
}

/**
 * Captures a running sandbox into a new snapshot of `kind` (recorded in
 * the catalog).
 * @throws {AenvError} `SBX_INVALID_STATE`, `SBX_SNAPSHOT_FAILED`.
 */
export async function checkpointEntry(
  d: CheckpointDeps,
  entry: SandboxEntry,
  kind: 'user' | 'fork',
  name: string | undefined,
): Promise<SnapshotRecord> {
  const { record } = entry;
  assertAlive(entry);
  assertOperation(record.id, kind === 'user' ? 'snapshot' : 'fork', record.state);
  const machine = entry.machine as NonNullable<SandboxEntry['machine']>;
  const t0 = performance.now();
  d.transition(entry, kind === 'user' ? 'snapshotting' : 'forking');
  const { id, dir } = d.snapshots.allocate();
  const op = kind === 'user' ? 'snapshot' : 'fork';
  try {
    const saved = await machine.checkpoint(dir);
    if (kind === 'user') crashPoint('snapshot.state-written');
    const snapshot = snapshotOf(record, { id, kind, name }, saved);
    d.snapshots.add(snapshot);
    crashPoint(kind === 'user' ? 'snapshot.recorded' : 'fork.checkpointed');
    d.metrics?.record(op, 'ok', { checkpoint: performance.now() - t0 });
    return snapshot;
  } catch (err) {
    d.metrics?.record(op, errorCode(err));
    throw toAenvError(err, 'SBX_SNAPSHOT_FAILED', `capturing sandbox ${record.id} failed`);
  } finally {
    if (entry.record.state !== 'running') d.transition(entry, 'running');
  }
}

/**
 * Checks that no live user snapshot has `name` (undefined: unnamed, always free).
 * @throws {AenvError} `SNAPSHOT_NAME_TAKEN`.
 */
export function assertSnapshotNameFree(snapshots: SnapshotCatalog, name: string | undefined): void {
  if (name === undefined) return;
  if (snapshots.list().some((s) => s.name === name && s.deleted !== true)) {
    throw new AenvError('SNAPSHOT_NAME_TAKEN', `a snapshot named '${name}' exists already`, {
      fields: { name },
    });
  }
}
