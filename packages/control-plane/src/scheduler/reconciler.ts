/**
 * The scheduler's loop (`aenv scheduler`): keeps the bindings in Redis in
 * line with what the nodes report, so nothing depends on a gateway having
 * seen every change. One instance works at a time (a lease in Redis);
 * others stand by and take over when it stops renewing.
 *
 * Each pass, per node:
 * - alive: a sandbox it reports without a binding (made directly on the
 *   node) is bound to it; a binding to it whose sandbox it no longer
 *   reports (killed by TTL, failed) is dropped; a paused sandbox it still
 *   holds that is bound elsewhere (moved while it was away, or killed as a
 *   tombstone) is released on it;
 * - lost: logged once; after `lostForgetMs` its sandboxes that cannot move
 *   (running ones died with it) are unbound.
 *
 * Placement itself happens in every gateway (`scheduler.ts`), from the same
 * state: a restarted scheduler loses nothing.
 *
 * @module
 */
import { LOG_FIELDS, type SandboxBinding } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import type { ClusterNode } from '../state/cluster-node.js';
import type { ClusterState } from '../state/cluster-state.js';

/** Bindings younger than this (relative to a report) are left alone: the report may predate them. */
const GRACE_MS = 10_000;
const LEASE = 'scheduler';

/** What the loop needs. */
export interface ReconcilerOptions {
  readonly state: ClusterState;
  /** Asks a node to drop its copy of a sandbox bound elsewhere. */
  readonly release: (node: ClusterNode, sandboxId: string) => Promise<void>;
  readonly logger: Logger;
  readonly intervalMs: number;
  readonly lostForgetMs: number;
}

/** What one pass changed. */
export interface ReconcileResult {
  readonly bound: string[];
  readonly unbound: string[];
  readonly released: string[];
  readonly lost: string[];
}

/** The reconciliation loop. */
export class Reconciler {
  readonly #o: ReconcilerOptions;
  readonly #lostSeen = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #lease: string | undefined;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(options: ReconcilerOptions) {
    this.#o = options;
  }

  /** Whether this instance holds the lease. */
  get active(): boolean {
    return this.#lease !== undefined;
  }

  /** Starts the loop. */
  start(): void {
    this.#schedule(0);
  }

  /** One pass over every node. */
  async pass(): Promise<ReconcileResult> {
    const result: ReconcileResult = { bound: [], unbound: [], released: [], lost: [] };
    for (const node of await this.#o.state.nodes()) {
      if (node.alive) await this.#alive(node, result);
      else await this.#lost(node, result);
    }
    return result;
  }

  /** Stops the loop and gives the lease up. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running;
    if (this.#lease !== undefined)
      await this.#o.state.unlock(LEASE, this.#lease).catch(() => undefined);
    this.#lease = undefined;
  }

  #schedule(delay: number): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#tick().finally(() => {
        this.#running = undefined;
        this.#schedule(this.#o.intervalMs);
      });
    }, delay);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    try {
      const ttl = this.#o.intervalMs * 3;
      if (this.#lease !== undefined && !(await this.#o.state.renewLock(LEASE, this.#lease, ttl))) {
        this.#o.logger.warn('scheduler lease lost; standing by');
        this.#lease = undefined;
      }
      this.#lease ??= await this.#o.state.lock(LEASE, ttl);
      if (this.#lease === undefined) return;
      const r = await this.pass();
      if (r.bound.length + r.unbound.length + r.released.length > 0) {
        this.#o.logger.info('bindings reconciled', { ...r });
      }
    } catch (err) {
      this.#o.logger.warn('reconciliation failed', errorFields(err));
    }
  }

  async #alive(node: ClusterNode, r: ReconcileResult): Promise<void> {
    if (this.#lostSeen.delete(node.id))
      this.#o.logger.info('node is back', { [LOG_FIELDS.nodeId]: node.id });
    const roster = new Map(node.report.sandboxes.map((s) => [s.id, s.state]));
    const bound = await this.#o.state.nodeSandboxes(node.id);
    const bindings = await this.#o.state.bindings([...new Set([...roster.keys(), ...bound])]);
    const reportedAt = Date.parse(node.report.reportedAt);
    for (const [id, state] of roster) {
      const b = bindings.get(id);
      if (b === undefined) {
        await this.#o.state.bind(id, {
          node: node.id,
          tenant: 'default',
          state: state === 'paused' ? 'paused' : 'running',
        });
        r.bound.push(id);
      } else if (b.node !== node.id && state === 'paused' && settled(b, reportedAt)) {
        await this.#o.release(node, id);
        r.released.push(id);
      }
    }
    for (const id of bound) {
      const b = bindings.get(id);
      if (roster.has(id) || b === undefined || b.node !== node.id || !settled(b, reportedAt))
        continue;
      await this.#o.state.unbind(id, b);
      r.unbound.push(id);
    }
  }

  async #lost(node: ClusterNode, r: ReconcileResult): Promise<void> {
    if (!this.#lostSeen.has(node.id)) {
      this.#lostSeen.add(node.id);
      this.#o.logger.warn('node lost: it stopped heartbeating', {
        [LOG_FIELDS.nodeId]: node.id,
        lastReport: node.report.reportedAt,
      });
      r.lost.push(node.id);
    }
    if (Date.now() - Date.parse(node.report.reportedAt) < this.#o.lostForgetMs) return;
    const ids = await this.#o.state.nodeSandboxes(node.id);
    const bindings = await this.#o.state.bindings(ids);
    for (const [id, b] of bindings) {
      if (b.node !== node.id || (b.state === 'paused' && b.export !== undefined)) continue;
      await this.#o.state.unbind(id, b);
      r.unbound.push(id);
    }
  }
}

/** Whether a binding is older than a report by the grace period. */
function settled(b: SandboxBinding, reportedAt: number): boolean {
  const at = Date.parse(b.updatedAt ?? '');
  return Number.isNaN(at) || at < reportedAt - GRACE_MS;
}
