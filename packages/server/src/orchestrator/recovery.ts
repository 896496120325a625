/**
 * What a node finds of its previous run: paused sandboxes come back (their
 * snapshot is all they need); sandboxes that had a machine lost it with the
 * old process (VMMs die with the daemon) and are dropped.
 *
 * @module
 */
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
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
