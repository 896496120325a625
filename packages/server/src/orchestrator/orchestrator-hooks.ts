/**
 * Hooks the orchestrator calls at lifecycle events, for what lives beside
 * it rather than in it: a clustered node (`cluster/`) exports every paused
 * sandbox to the shared store before the pause is acknowledged, and keeps
 * the sandbox's binding in the cluster state current. Hooks never throw:
 * they log and carry on (a failed export leaves the sandbox paused here,
 * resumable on this node only).
 *
 * @module
 */
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { SandboxRecord } from './sandbox.js';

/** Lifecycle hooks of the orchestrator. All optional; none may throw. */
export interface OrchestratorHooks {
  /**
   * A sandbox was paused: its record and snapshot are durable here.
   * Awaited before the pause is acknowledged, within the sandbox's
   * operation (a resume queued behind it waits).
   */
  afterPause?(record: SandboxRecord, snapshot: SnapshotRecord): Promise<void>;
  /** A paused sandbox runs again (its exported pause snapshot is stale). */
  afterResume?(record: SandboxRecord): void;
  /** A sandbox is gone from this node (killed, timed out, failed, or moved away). */
  afterKill?(record: SandboxRecord): void;
}
