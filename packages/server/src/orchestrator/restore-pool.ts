/**
 * `RestorePool`: prepared restores ({@link PooledMachine}) of the node's
 * template snapshots, so a create from a pooled template only loads the
 * device state, continues the VM and calls envd's `/init`.
 *
 * One {@link WarmPool} per template snapshot, between the config's
 * watermarks, refilled in the background. Which snapshot a template is
 * comes from `resolve` (the node's catalogs), checked every `checkSeconds`
 * and whenever a create asks for a snapshot the pool does not know: a
 * rebuilt template's old machines are drained and new ones prepared.
 * `take(dir)` hands out a machine of exactly that snapshot, or nothing (the
 * launcher then restores the ordinary way). `close()` drains everything;
 * a machine is never left behind by the pool: it is taken, or destroyed.
 *
 * @module
 */
import type { MachineSnapshot } from './launcher.js';
import {
  preparePooledMachine,
  type PooledMachine,
  type PooledMachineDeps,
} from './pooled-machine.js';
import { checkRestorePoolConfig, type RestorePoolConfig } from './restore-pool-config.js';
import { WarmPool } from './warm-pool.js';

/** What a {@link RestorePool} runs on. */
export interface RestorePoolOptions {
  readonly config: RestorePoolConfig;
  /** The snapshot a template (id or alias) is now, or undefined. */
  readonly resolve: (template: string) => MachineSnapshot | undefined;
  readonly machines: PooledMachineDeps;
  /** Background failures (preparing, releasing), with the template concerned. */
  readonly onError: (err: unknown, template: string) => void;
  /** A template's machines were drained (its snapshot changed, or it is gone). */
  readonly onDrained?: (template: string, snapshotDir: string) => void;
  /** Prepares one machine. @default preparePooledMachine */
  readonly prepare?: (snapshot: MachineSnapshot, signal: AbortSignal) => Promise<PooledMachine>;
}

/** One template snapshot's pool. */
interface SnapshotPool {
  readonly template: string;
  readonly snapshot: MachineSnapshot;
  readonly pool: WarmPool<PooledMachine>;
}

/** Levels of one template's pool. */
export interface RestorePoolLevel {
  readonly template: string;
  readonly snapshotDir: string;
  readonly ready: number;
  readonly building: number;
}

/** See the module comment. */
export class RestorePool {
  readonly #o: RestorePoolOptions;
  readonly #pools = new Map<string, SnapshotPool>();
  readonly #closing = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: RestorePoolOptions) {
    this.#o = { ...options, config: checkRestorePoolConfig(options.config) };
  }

  /** Whether any template is pooled at all. */
  get enabled(): boolean {
    return this.#o.config.low > 0 && this.#o.config.templates.length > 0;
  }

  /** Looks up the templates and starts filling; then checks every `checkSeconds`. */
  start(): void {
    if (!this.enabled || this.#closed) return;
    this.reconcile();
    this.#timer = setInterval(() => this.reconcile(), this.#o.config.checkSeconds * 1000);
    this.#timer.unref();
  }

  /** Brings the pools in line with the templates' current snapshots. */
  reconcile(): void {
    if (!this.enabled || this.#closed) return;
    const wanted = new Map<string, { template: string; snapshot: MachineSnapshot }>();
    for (const template of this.#o.config.templates) {
      const snapshot = this.#resolve(template);
      if (snapshot?.dir !== undefined && !wanted.has(snapshot.dir)) {
        wanted.set(snapshot.dir, { template, snapshot });
      }
    }
    for (const [dir, p] of this.#pools) {
      if (wanted.has(dir)) continue;
      this.#pools.delete(dir);
      this.#track(p.pool.close());
      this.#o.onDrained?.(p.template, dir);
    }
    for (const [dir, w] of wanted) {
      if (!this.#pools.has(dir)) this.#pools.set(dir, this.#newPool(w.template, w.snapshot));
      this.#pools.get(dir)?.pool.kick();
    }
  }

  /**
   * A prepared machine of the snapshot in `snapshotDir`, or undefined (then
   * the pool checks the templates again, in case one was rebuilt).
   */
  take(snapshotDir: string): PooledMachine | undefined {
    const p = this.#pools.get(snapshotDir);
    if (p === undefined) {
      if (this.enabled) queueMicrotask(() => this.reconcile());
      return undefined;
    }
    return p.pool.take();
  }

  /**
   * Releases one prepared machine (and its slot) without refilling, for a
   * launch that found the node out of slots; resolves with whether there
   * was one.
   */
  async shed(): Promise<boolean> {
    for (const p of this.#pools.values()) if (await p.pool.discardOne()) return true;
    return false;
  }

  /** Levels per template, for metrics and tests. */
  levels(): RestorePoolLevel[] {
    return [...this.#pools.entries()].map(([dir, p]) => ({
      template: p.template,
      snapshotDir: dir,
      ready: p.pool.ready,
      building: p.pool.building,
    }));
  }

  /** Destroys every prepared machine and stops refilling. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    for (const p of this.#pools.values()) this.#track(p.pool.close());
    this.#pools.clear();
    while (this.#closing.size > 0) await Promise.all(this.#closing);
  }

  #resolve(template: string): MachineSnapshot | undefined {
    try {
      return this.#o.resolve(template);
    } catch (err) {
      this.#o.onError(err, template);
      return undefined;
    }
  }

  #newPool(template: string, snapshot: MachineSnapshot): SnapshotPool {
    const prepare =
      this.#o.prepare ??
      ((s: MachineSnapshot, signal: AbortSignal) =>
        preparePooledMachine(this.#o.machines, s, signal));
    const pool = new WarmPool<PooledMachine>({
      low: this.#o.config.low,
      high: this.#o.config.high,
      make: (signal) => prepare(snapshot, signal),
      destroy: (m) => m.cleanup.run(),
      lost: (m) => m.prepared.ended,
      onError: (err) => this.#o.onError(err, template),
    });
    return { template, snapshot, pool };
  }

  #track(p: Promise<void>): void {
    this.#closing.add(p);
    void p.finally(() => this.#closing.delete(p));
  }
}
