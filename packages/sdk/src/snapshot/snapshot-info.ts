/**
 * A snapshot as the SDK shows it.
 *
 * @module
 */
import type { SnapshotWire } from '../api/api-wire.js';

/** A snapshot: a sandbox's memory and disk at one moment; create sandboxes from its id. */
export interface SnapshotInfo {
  readonly snapshotId: string;
  readonly names: readonly string[];
  /** The sandbox it was taken from. */
  readonly sandboxId: string | undefined;
  readonly templateId: string | undefined;
  readonly createdAt: Date | undefined;
  /** Snapshot ids from the oldest ancestor to this one (forks of forks). */
  readonly lineage: readonly string[];
}

/** Converts a snapshot from the wire. */
export function toSnapshotInfo(w: SnapshotWire): SnapshotInfo {
  return {
    snapshotId: w.snapshotID,
    names: w.names ?? [],
    sandboxId: w.sandboxID,
    templateId: w.templateID,
    createdAt: w.createdAt === undefined ? undefined : new Date(w.createdAt),
    lineage: w.lineage ?? [w.snapshotID],
  };
}
