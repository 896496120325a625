/**
 * The scheduler: places sandboxes on nodes. It reads the nodes from the
 * cluster state, filters and scores them (`placement.ts`), lets the
 * strategy choose, and records the placement
 * as pending on the chosen node until the node's next heartbeat reports
 * it, so concurrent placements through any gateway replica see each other.
 *
 * Batch creates (`count`) are planned as that many single placements
 * against the nodes as each previous one leaves them, then grouped by node;
 * both go through a {@link PlacementIndex} (one pass over flat arrays per
 * placement, no object per node).
 * Placements through one scheduler run one at a time (each sees the
 * previous one's pending entry); placements through several gateways at
 * the same instant may both pick the node that was least loaded.
 *
 * @module
 */
import type { ClusterNode } from '../state/cluster-node.js';
import type { ClusterState } from '../state/cluster-state.js';
import { PlacementIndex } from './placement-index.js';
import {
  DEFAULT_LIMITS,
  type Candidate,
  type PlacementLimits,
  type PlacementRequest,
} from './placement.js';
import type { PlacementStrategy } from './strategies.js';

/** What the scheduler runs on. */
export interface SchedulerOptions {
  readonly state: ClusterState;
  readonly strategy: PlacementStrategy;
  readonly limits?: PlacementLimits;
}

/** Sandboxes placed on one node. */
export interface NodeShare {
  readonly node: ClusterNode;
  readonly count: number;
}

/** A recorded placement: release it if the create failed. */
export interface Placement {
  readonly node: ClusterNode;
  /** Forgets the pending placement (the create failed; nothing runs there). */
  release(): Promise<void>;
}

/**
 * Chooses one node for `req` among `nodes`.
 * @throws {AenvError} `CLUSTER_NO_NODES`, `CLUSTER_NO_CAPACITY`.
 */
export function placeOne(
  nodes: readonly ClusterNode[],
  req: PlacementRequest,
  strategy: PlacementStrategy,
  limits: PlacementLimits = DEFAULT_LIMITS,
): Candidate {
  return new PlacementIndex(nodes, limits).place(req, strategy);
}

/**
 * Plans `count` placements, each seeing the previous ones.
 * @throws {AenvError} `CLUSTER_NO_NODES`, `CLUSTER_NO_CAPACITY` (when not even one fits).
 * @returns the shares, in order of first placement; fewer than `count` in
 *   total when the cluster fills up.
 */
export function planBatch(
  nodes: readonly ClusterNode[],
  req: PlacementRequest,
  count: number,
  strategy: PlacementStrategy,
  limits: PlacementLimits = DEFAULT_LIMITS,
): NodeShare[] {
  const index = new PlacementIndex(nodes, limits);
  const shares = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    let chosen: Candidate;
    try {
      chosen = index.place(req, strategy);
    } catch (err) {
      if (i === 0) throw err;
      break;
    }
    index.record(chosen.node.id, req);
    shares.set(chosen.node.id, (shares.get(chosen.node.id) ?? 0) + 1);
  }
  return [...shares].map(([id, n]) => ({ node: index.node(id) as ClusterNode, count: n }));
}

/** Places sandboxes on the cluster's nodes. */
export class Scheduler {
  readonly #o: SchedulerOptions;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: SchedulerOptions) {
    this.#o = options;
  }

  /** The strategy in use. */
  get strategy(): string {
    return this.#o.strategy.name;
  }

  /**
   * Places one sandbox and records it as pending on its node.
   * Tenant quotas are the gateway's (`tenants/tenant-quota.ts`).
   * @throws {AenvError} `CLUSTER_NO_NODES`, `CLUSTER_NO_CAPACITY`, `CLUSTER_STATE_UNAVAILABLE`.
   */
  async place(req: PlacementRequest): Promise<Placement> {
    return this.#serially(async () => {
      const nodes = await this.#o.state.nodes();
      const chosen = placeOne(nodes, req, this.#o.strategy, this.#o.limits);
      return this.#record(chosen.node, req);
    });
  }

  /**
   * Places `count` sandboxes (a batch create), recording each as pending.
   * @throws {AenvError} as {@link place}; a partial plan when the cluster fills up.
   */
  async placeBatch(
    req: PlacementRequest,
    count: number,
  ): Promise<{ shares: NodeShare[]; placements: Placement[] }> {
    return this.#serially(async () => {
      const nodes = await this.#o.state.nodes();
      const shares = planBatch(nodes, req, count, this.#o.strategy, this.#o.limits);
      const placements: Placement[] = [];
      for (const s of shares) {
        for (let i = 0; i < s.count; i++) placements.push(await this.#record(s.node, req));
      }
      return { shares, placements };
    });
  }

  /** Runs placements one after the other. */
  #serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #record(node: ClusterNode, req: PlacementRequest): Promise<Placement> {
    const state = this.#o.state;
    const token = await state.addPending(node.id, req);
    return { node, release: () => state.dropPending(node.id, token).catch(() => undefined) };
  }
}
