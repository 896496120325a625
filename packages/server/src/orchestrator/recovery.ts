/**
 * What a node finds of its previous run: paused sandboxes come back (their
 * snapshot is all they need); sandboxes that had a machine lost it with the
 * old process (VMMs die with the daemon) and come back `failed`, with the
 * reason, until they are killed or their TTL ends — a client that was told
 * the sandbox exists learns why it is gone instead of a bare 404.
 * Snapshot directories without a record (a crash between writing one and
 * recording it) are deleted.
 *
 * @module
 */
import { LOG_FIELDS } from '@aenv/shared';
import type { Logger } from '../log.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { DocTable } from '../store/node-store.js';
import { fromSandboxDoc, toSandboxDoc, type SandboxDoc, type SandboxRecord } from './sandbox.js';

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
  /** Takes a paused or failed record back (before any snapshot is released). */
  readonly register: (record: SandboxRecord) => void;
  /** Releases a snapshot unless something still uses it. */
  readonly release: (id: string | undefined) => Promise<void>;
}

/**
 * Loads the sandboxes of a previous run: paused ones are registered; lost
 * ones are stored and registered as `failed` with the reason (they keep
 * their source snapshot until killed); pause and fork snapshots nothing
 * uses any more are released, and unrecorded snapshot directories removed.
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
    const failed = asFailed(record);
    d.sandboxes.put(toSandboxDoc(failed));
    d.register(failed);
  }
  for (const s of d.snapshots.list()) {
    if (s.kind === 'pause' || s.kind === 'fork') await d.release(s.id);
  }
  await d.snapshots.removeUnrecorded();
  return paused;
}

/** A lost record as `failed` (one that failed already keeps its reason). */
export function asFailed(record: SandboxRecord): SandboxRecord {
  if (record.state === 'failed' && record.failureReason !== undefined) return record;
  return {
    ...record,
    state: 'failed',
    pausedSnapshotId: undefined,
    failureReason: `lost with the previous node process (it was ${record.state})`,
  };
}
