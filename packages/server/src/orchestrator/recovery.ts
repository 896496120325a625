/**
 * What a node finds of its previous run: paused sandboxes come back (their
 * snapshot is all they need); sandboxes that had a machine lost it with the
 * old process (VMMs die with the daemon) and are dropped.
 *
 * @module
 */
import { LOG_FIELDS } from '@aenv/shared';
import type { Logger } from '../log.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { DocTable } from '../store/node-store.js';
import { fromSandboxDoc, type SandboxDoc, type SandboxRecord } from './sandbox.js';

/** The records of a previous run, sorted. */
export interface Recovered {
  readonly paused: SandboxRecord[];
  readonly lost: SandboxRecord[];
}

/** Sorts stored records into those that come back paused and those that were lost. */
export function classifyRecords(
  docs: readonly SandboxDoc[],
  snapshots: SnapshotCatalog,
): Recovered {
  const paused: SandboxRecord[] = [];
  const lost: SandboxRecord[] = [];
  for (const doc of docs) {
    const record = fromSandboxDoc(doc);
    const id = record.pausedSnapshotId;
    const resumable =
      record.state === 'paused' && id !== undefined && snapshots.find(id) !== undefined;
    (resumable ? paused : lost).push(record);
  }
  return { paused, lost };
}

/** What {@link recoverRecords} uses of the orchestrator. */
export interface RecoveryDeps {
  readonly sandboxes: DocTable<SandboxDoc>;
  readonly snapshots: SnapshotCatalog;
  readonly logger: Logger;
  /** Takes a paused record back (before any snapshot is released). */
  readonly register: (record: SandboxRecord) => void;
  /** Releases a snapshot unless something still uses it. */
  readonly release: (id: string | undefined) => Promise<void>;
}

/**
 * Loads the sandboxes of a previous run: paused ones are registered; lost
 * ones are removed and their source snapshot released; pause and fork
 * snapshots nothing uses any more are released.
 * @returns the paused records.
 */
export async function recoverRecords(d: RecoveryDeps): Promise<SandboxRecord[]> {
  const { paused, lost } = classifyRecords(d.sandboxes.all(), d.snapshots);
  for (const record of paused) d.register(record);
  for (const record of lost) {
    d.logger.warn('sandbox lost with the previous node process', {
      [LOG_FIELDS.sandboxId]: record.id,
      state: record.state,
    });
    d.sandboxes.delete(record.id);
    await d.release(record.sourceSnapshotId);
  }
  for (const s of d.snapshots.list()) {
    if (s.kind === 'pause' || s.kind === 'fork') await d.release(s.id);
  }
  return paused;
}
