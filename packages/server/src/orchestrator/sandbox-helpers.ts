/**
 * Small pieces of the orchestrator's vocabulary that need no state: list
 * filtering, the fork/batch request and result types, running N starts at
 * once, how a machine starts from a snapshot, and the errors operations
 * answer.
 *
 * @module
 */
import { AenvError, toAenvError } from '@aenv/shared';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { LaunchSource } from './launcher.js';
import type { SandboxFilter, SandboxRecord } from './sandbox.js';
import type { SandboxEntry } from './sandbox-entry.js';

/** What a fork asks for. */
export interface ForkRequest {
  readonly count: number;
  /** TTL of the children, seconds (default: the source's last TTL). */
  readonly timeoutSeconds?: number | undefined;
  /** Merged over the source's metadata. */
  readonly metadata?: Readonly<Record<string, string>> | undefined;
}

/** One child of a fork or batch create: its record, or why it failed. */
export type StartResult = SandboxRecord | AenvError;

/**
 * Runs `start` `count` times, at most `limit` at once, in order; each result
 * is a record or the error it failed with.
 */
export async function settle(
  count: number,
  start: () => Promise<SandboxRecord>,
  limit = count,
): Promise<StartResult[]> {
  const results: StartResult[] = new Array<StartResult>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      results[i] = await start().catch((err: unknown) =>
        toAenvError(err, 'SBX_START_FAILED', 'start failed'),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, worker));
  return results;
}

/** How a machine starts from a snapshot: restore its memory, or boot its disk. */
export function sourceOf(snapshot: SnapshotRecord): LaunchSource {
  return snapshot.dir === undefined
    ? { kind: 'boot', image: snapshot.image }
    : { kind: 'restore', snapshot: { dir: snapshot.dir, image: snapshot.image } };
}

/** The stable code of anything thrown (for metrics). */
export function errorCode(err: unknown): string {
  return err instanceof AenvError ? err.code : 'INTERNAL';
}

/** `SBX_NOT_FOUND` for `id`. */
export function notFound(id: string): AenvError {
  return new AenvError('SBX_NOT_FOUND', `sandbox ${id} not found`, { fields: { sandboxId: id } });
}

/**
 * Checks the count of a fork or batch create against the node's limit.
 * @throws {AenvError} `INVALID_ARGUMENT`.
 */
export function assertCount(count: number, max: number): void {
  if (!Number.isInteger(count) || count < 1 || count > max) {
    throw new AenvError(
      'INVALID_ARGUMENT',
      `count must be 1 to ${max} on this node, got ${count}`,
      {
        fields: { field: 'count' },
      },
    );
  }
}

/** Operations queued behind a kill find the sandbox gone. */
export function assertAlive(entry: SandboxEntry): void {
  if (entry.killRequested || entry.record.state === 'killed') throw notFound(entry.id);
}

/** Whether a record passes a list filter. */
export function matchesFilter(r: SandboxRecord, f: SandboxFilter): boolean {
  if (f.states !== undefined && !f.states.includes(r.state)) return false;
  if (f.templateId !== undefined && r.templateId !== f.templateId && r.alias !== f.templateId) {
    return false;
  }
  if (f.startedAfter !== undefined && r.startedAt <= f.startedAfter) return false;
  for (const [k, v] of Object.entries(f.metadata ?? {})) if (r.metadata[k] !== v) return false;
  return true;
}
