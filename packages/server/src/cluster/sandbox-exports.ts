/**
 * Paused sandboxes in a cluster: the orchestrator hooks that export each
 * pause to the shared store and keep the sandbox's binding in Redis
 * current (node, state, exported snapshot), and the two halves of a move —
 * `adopt` on the node taking a paused sandbox over (import its snapshot,
 * register it paused) and `release` on the node it leaves (drop the local
 * copy without touching the export).
 *
 * A pause is acknowledged only once its export is in the shared store and
 * the binding names it, so a node lost right after a pause loses nothing.
 * A resume clears the export from the binding (the snapshot is stale from
 * then on) and deletes it. A sandbox killed here (by request, TTL or a
 * machine failure) is unbound, unless it is being released to another node.
 *
 * @module
 */
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { AenvError, LOG_FIELDS, type ClusterKeys } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import type { OrchestratorHooks } from '../orchestrator/orchestrator-hooks.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import { fromSandboxDoc, toSandboxDoc, type SandboxRecord } from '../orchestrator/sandbox.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { SharedSnapshots } from './shared-snapshots.js';

/** What the exports need. */
export interface SandboxExportsOptions {
  readonly redis: Redis;
  readonly keys: ClusterKeys;
  readonly shared: SharedSnapshots;
  readonly snapshots: SnapshotCatalog;
  readonly snapshotsDir: string;
  readonly nodeId: string;
  readonly compat: string;
  readonly exportOnPause: boolean;
  readonly logger: Logger;
}

/** Exports, bindings and moves of this node's paused sandboxes. */
export class SandboxExports {
  readonly #o: SandboxExportsOptions;
  /** Sandboxes being released to another node: their kill is no removal. */
  readonly #releasing = new Set<string>();
  /** Background work (binding updates, stale exports' removal) to await at close. */
  readonly #background = new Set<Promise<void>>();

  constructor(options: SandboxExportsOptions) {
    this.#o = options;
  }

  /** The orchestrator hooks. */
  get hooks(): OrchestratorHooks {
    return {
      afterPause: (r, s) => this.#afterPause(r, s),
      afterResume: (r) => this.#later('resume', r.id, () => this.#afterResume(r)),
      afterKill: (r) => this.#later('kill', r.id, () => this.#afterKill(r)),
    };
  }

  /**
   * Takes over a paused sandbox from its exported pause snapshot. Idempotent.
   * @throws {AenvError} `SNAPSHOT_NOT_FOUND`, `INVALID_ARGUMENT` (the export is
   *   another sandbox's), `VMM_SNAPSHOT_INCOMPATIBLE`, `CLUSTER_TRANSFER_FAILED`.
   */
  async adopt(o: Orchestrator, sandboxId: string, snapshotId: string): Promise<SandboxRecord> {
    const known = o.list().find((r) => r.id === sandboxId);
    if (known !== undefined) return known;
    const imported = this.#o.snapshots.find(snapshotId) === undefined;
    const exp = imported
      ? await this.#o.shared.import(snapshotId, join(this.#o.snapshotsDir, snapshotId))
      : await this.#o.shared.read(snapshotId);
    if (exp.sandbox?.id !== sandboxId) {
      throw new AenvError(
        'INVALID_ARGUMENT',
        `snapshot ${snapshotId} does not hold sandbox ${sandboxId}`,
        {
          fields: { sandboxId, snapshotId },
        },
      );
    }
    if (imported) this.#o.snapshots.add(exp.snapshot);
    try {
      o.adopt(fromSandboxDoc(exp.sandbox));
    } catch (err) {
      if (imported) await o.releaseSnapshot(snapshotId);
      throw err;
    }
    await this.#bind(sandboxId, { state: 'paused' });
    this.#o.logger.info('paused sandbox taken over from another node', {
      [LOG_FIELDS.sandboxId]: sandboxId,
      [LOG_FIELDS.snapshotId]: snapshotId,
      from: exp.node,
    });
    return o.get(sandboxId);
  }

  /** Drops the local copy of a sandbox that moved to another node. */
  async release(o: Orchestrator, sandboxId: string): Promise<void> {
    this.#releasing.add(sandboxId);
    try {
      await o.kill(sandboxId);
    } catch (err) {
      if (!(err instanceof AenvError && err.code === 'SBX_NOT_FOUND')) throw err;
    } finally {
      this.#releasing.delete(sandboxId);
    }
  }

  /**
   * At start: paused sandboxes recovered here that another node took over
   * while this one was away are dropped.
   */
  async dropMoved(o: Orchestrator): Promise<string[]> {
    const dropped: string[] = [];
    for (const r of o.list({ states: ['paused'] })) {
      const owner = await this.#o.redis.hget(this.#o.keys.sandbox(r.id), 'node');
      if (owner !== null && owner !== this.#o.nodeId) {
        await this.release(o, r.id);
        dropped.push(r.id);
      }
    }
    return dropped;
  }

  /** Waits for background work (before the Redis connection closes). */
  async settle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  async #afterPause(record: SandboxRecord, snapshot: SnapshotRecord): Promise<void> {
    try {
      if (!this.#o.exportOnPause) {
        await this.#bind(record.id, { state: 'paused' }, ['export', 'base']);
        return;
      }
      const t0 = performance.now();
      const exp = await this.#o.shared.export(snapshot, { sandbox: toSandboxDoc(record) });
      const previous = await this.#o.redis.hget(this.#o.keys.sandbox(record.id), 'export');
      await this.#bind(record.id, {
        state: 'paused',
        export: snapshot.id,
        base: exp.memory?.baseId ?? '',
        compat: this.#o.compat,
      });
      if (previous !== null && previous !== snapshot.id) this.#removeExport(previous);
      this.#o.logger.info('paused sandbox exported', {
        [LOG_FIELDS.sandboxId]: record.id,
        [LOG_FIELDS.snapshotId]: snapshot.id,
        [LOG_FIELDS.durationMs]: Math.round(performance.now() - t0),
      });
    } catch (err) {
      this.#o.logger.warn('exporting a paused sandbox failed: it resumes on this node only', {
        [LOG_FIELDS.sandboxId]: record.id,
        ...errorFields(err),
      });
      await this.#bind(record.id, { state: 'paused' }, ['export', 'base']).catch(() => undefined);
    }
  }

  async #afterResume(record: SandboxRecord): Promise<void> {
    const previous = await this.#o.redis.hget(this.#o.keys.sandbox(record.id), 'export');
    await this.#bind(record.id, { state: 'running' }, ['export', 'base']);
    if (previous !== null) this.#removeExport(previous);
  }

  async #afterKill(record: SandboxRecord): Promise<void> {
    if (this.#releasing.has(record.id)) return;
    const key = this.#o.keys.sandbox(record.id);
    const b = await this.#o.redis.hgetall(key);
    if (b.node !== undefined && b.node !== this.#o.nodeId) return;
    const multi = this.#o.redis
      .multi()
      .del(key)
      .srem(this.#o.keys.nodeSandboxes(this.#o.nodeId), record.id);
    if (b.tenant !== undefined) multi.srem(this.#o.keys.tenantSandboxes(b.tenant), record.id);
    await multi.exec();
    if (b.export !== undefined) this.#removeExport(b.export);
  }

  async #bind(id: string, fields: Record<string, string>, remove: string[] = []): Promise<void> {
    const key = this.#o.keys.sandbox(id);
    const multi = this.#o.redis
      .multi()
      .hset(key, { ...fields, node: this.#o.nodeId, updatedAt: new Date().toISOString() })
      .sadd(this.#o.keys.nodeSandboxes(this.#o.nodeId), id);
    if (remove.length > 0) multi.hdel(key, ...remove);
    await multi.exec();
  }

  #removeExport(snapshotId: string): void {
    this.#later('remove export', snapshotId, () => this.#o.shared.remove(snapshotId));
  }

  #later(what: string, id: string, work: () => Promise<void>): void {
    const p = work()
      .catch((err: unknown) =>
        this.#o.logger.warn(`cluster: ${what} bookkeeping failed`, { id, ...errorFields(err) }),
      )
      .finally(() => this.#background.delete(p));
    this.#background.add(p);
  }
}
