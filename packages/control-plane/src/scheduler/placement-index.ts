/**
 * The placement index: the nodes of one placement round (a single create,
 * a batch, the simulation) as flat numeric arrays, updated in place as
 * placements are recorded, so a placement is one allocation-free pass over
 * typed arrays instead of a candidate object per node.
 *
 * Contract: {@link PlacementIndex.place} chooses exactly what
 * `placeOne(nodes, req, strategy)` (`findCandidates` + the strategy's
 * `choose`) chooses on the same nodes with the same placements applied —
 * same filters in the same order, the same load arithmetic, the same ties
 * and random draw; `placement-index.test.ts` checks that on random
 * clusters. Strategies with `chooseIn` choose by position over the scan's
 * arrays; others get the candidate list built for them. Per-template columns
 * (holds, warm sandboxes) and per-memory-base columns are built on first
 * use and kept up to date by {@link PlacementIndex.record}.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { ClusterNode } from '../state/cluster-node.js';
import {
  DEFAULT_LIMITS,
  describeRejections,
  type Candidate,
  type PlacementLimits,
  type PlacementRequest,
  type RejectReason,
  type Rejections,
} from './placement.js';
import type { CandidateSet, PlacementStrategy } from './strategies.js';

/** Reasons in the order they are checked (an index into this list is a reason code). */
const REASONS: readonly RejectReason[] = [
  'lost',
  'draining',
  'excluded',
  'driver',
  'compat',
  'template',
  'disk',
  'slots',
  'vcpus',
  'memory',
];
const [LOST, DRAINING, EXCLUDED, DRIVER, COMPAT, TEMPLATE, DISK, SLOTS, VCPUS, MEMORY] = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
] as const;

/** One template name's column: which nodes hold it (ids by node) and their warm sandboxes. */
interface NameColumn {
  readonly ids: (readonly string[] | undefined)[];
  readonly warm: Float64Array;
}

/** The filters of one scan, worked out once. */
interface ScanFilter {
  readonly req: PlacementRequest;
  readonly exclude: Set<string> | undefined;
  /** Driver, compat or exclude to check against each node. */
  readonly byNode: boolean;
  /** Template ids by node, when the template is required. */
  readonly ids: readonly (readonly string[] | undefined)[] | undefined;
}

/** The traits of the candidate under consideration, reused for every node. */
class Traits {
  load = 0;
  holdsTemplate = false;
  warm = 0;
  holdsBase = false;
}

/** How a recorded placement changes its node. */
export interface RecordOptions {
  /** Count it as a running sandbox of its template (warm caches). @default false */
  readonly warm?: boolean;
  /** Count it as a bound sandbox (tie-breaking). @default false */
  readonly bound?: boolean;
}

/** The nodes of a placement round, indexed for fast repeated placement. */
export class PlacementIndex {
  readonly #limits: PlacementLimits;
  readonly #nodes: ClusterNode[];
  readonly #views: (ClusterNode | undefined)[];
  readonly #pos = new Map<string, number>();
  readonly #status: Uint8Array;
  readonly #diskLow: Uint8Array;
  readonly #slotBase: Float64Array;
  readonly #slotPend: Float64Array;
  readonly #slotCap: Float64Array;
  readonly #cpuBase: Float64Array;
  readonly #cpuPend: Float64Array;
  readonly #cpuCap: Float64Array;
  readonly #memBase: Float64Array;
  readonly #memPend: Float64Array;
  readonly #memCap: Float64Array;
  readonly #bound: Float64Array;
  readonly #names = new Map<string, NameColumn>();
  readonly #bases = new Map<string, Uint8Array>();
  /** Warm sandboxes recorded per template name (for columns built later). */
  readonly #warmAdded = new Map<string, Float64Array>();
  readonly #rejected = new Int32Array(REASONS.length);
  readonly #traits = new Traits();
  /** Candidates of the last scan: node positions and loads. */
  readonly #found: Int32Array;
  readonly #foundLoad: Float64Array;
  #alive = 0;

  constructor(nodes: readonly ClusterNode[], limits: PlacementLimits = DEFAULT_LIMITS) {
    const n = nodes.length;
    this.#limits = limits;
    this.#nodes = [...nodes];
    this.#views = new Array<ClusterNode | undefined>(n).fill(undefined);
    this.#status = new Uint8Array(n);
    this.#diskLow = new Uint8Array(n);
    const f64 = (): Float64Array => new Float64Array(n);
    this.#slotBase = f64();
    this.#slotPend = f64();
    this.#slotCap = f64();
    this.#cpuBase = f64();
    this.#cpuPend = f64();
    this.#cpuCap = f64();
    this.#memBase = f64();
    this.#memPend = f64();
    this.#memCap = f64();
    this.#bound = f64();
    this.#found = new Int32Array(n);
    this.#foundLoad = f64();
    nodes.forEach((node, i) => this.#load(node, i));
  }

  #load(node: ClusterNode, i: number): void {
    const { capacity, usage } = node.report;
    const p = node.pending;
    this.#pos.set(node.id, i);
    this.#status[i] = node.status === 'lost' ? LOST : node.status === 'draining' ? DRAINING : 255;
    if (node.status !== 'lost') this.#alive++;
    this.#diskLow[i] = usage.diskFreeMiB < this.#limits.minDiskFreeMiB ? 1 : 0;
    this.#slotBase[i] = usage.running;
    this.#slotPend[i] = p.count;
    this.#slotCap[i] = Math.max(1, capacity.slots);
    this.#cpuBase[i] = usage.vcpus;
    this.#cpuPend[i] = p.vcpus;
    this.#cpuCap[i] = Math.max(1, capacity.vcpus * this.#limits.cpuOvercommit);
    this.#memBase[i] = usage.memoryMiB;
    this.#memPend[i] = p.memoryMiB;
    this.#memCap[i] = Math.max(1, capacity.memoryMiB * this.#limits.memoryOvercommit);
    this.#bound[i] = node.bound;
  }

  /** Number of nodes. */
  get size(): number {
    return this.#nodes.length;
  }

  /**
   * Chooses a node for `req` (nothing is recorded: see {@link record}).
   * @throws {AenvError} `CLUSTER_NO_NODES`, `CLUSTER_NO_CAPACITY`.
   */
  place(req: PlacementRequest, strategy: PlacementStrategy): Candidate {
    if (this.#alive === 0) {
      throw new AenvError('CLUSTER_NO_NODES', 'no node of the cluster is alive');
    }
    const chosen =
      strategy.chooseIn === undefined
        ? this.#chooseFromList(req, strategy)
        : this.#choosePositional(req, strategy.chooseIn);
    if (chosen === undefined) {
      const rejected = this.#rejections();
      throw new AenvError(
        'CLUSTER_NO_CAPACITY',
        `no node can take the sandbox (${describeRejections(rejected)})`,
        { fields: { ...rejected } },
      );
    }
    return chosen;
  }

  /** The nodes that can take `req`, and why the others cannot (as `findCandidates`). */
  candidates(req: PlacementRequest): { candidates: Candidate[]; rejected: Rejections } {
    const col = this.#columnOf(req);
    const base = this.#baseOf(req);
    const count = this.#scan(req, col);
    const candidates: Candidate[] = [];
    for (let k = 0; k < count; k++) {
      const node = this.nodeAt(this.#found[k] as number);
      candidates.push({ node, ...this.#traitsOf(k, col, base) });
    }
    return { candidates, rejected: this.#rejections() };
  }

  /** Records a placement of `use` on node `id` as pending there. */
  record(id: string, use: PlacementRequest, options: RecordOptions = {}): void {
    const i = this.#pos.get(id);
    if (i === undefined) return;
    this.#slotPend[i] = (this.#slotPend[i] as number) + 1;
    this.#cpuPend[i] = (this.#cpuPend[i] as number) + use.vcpus;
    this.#memPend[i] = (this.#memPend[i] as number) + use.memoryMiB;
    if (options.bound === true) this.#bound[i] = (this.#bound[i] as number) + 1;
    if (options.warm === true && use.templateId !== undefined) this.#addWarm(i, use.templateId);
    this.#views[i] = undefined;
  }

  /** Load of node `id` as it stands (0..1; 1 when it takes nothing more), or undefined. */
  loadOf(id: string): number | undefined {
    const i = this.#pos.get(id);
    if (i === undefined) return undefined;
    const l = this.#loadAt(i, 0, 0, -1);
    return l < 0 ? 1 : l;
  }

  /** Node `i` with the placements recorded since the index was built. */
  nodeAt(i: number): ClusterNode {
    const cached = this.#views[i];
    if (cached !== undefined) return cached;
    const orig = this.#nodes[i] as ClusterNode;
    const view: ClusterNode = {
      ...orig,
      bound: this.#bound[i] as number,
      pending: {
        count: this.#slotPend[i] as number,
        vcpus: this.#cpuPend[i] as number,
        memoryMiB: this.#memPend[i] as number,
      },
    };
    this.#views[i] = view;
    return view;
  }

  /** Node `id` as it stands, or undefined. */
  node(id: string): ClusterNode | undefined {
    const i = this.#pos.get(id);
    return i === undefined ? undefined : this.nodeAt(i);
  }

  /** Every node as it stands, in the order given. */
  nodes(): ClusterNode[] {
    return this.#nodes.map((_, i) => this.nodeAt(i));
  }

  #addWarm(i: number, name: string): void {
    const ids = this.#nodes[i]?.templates.get(name);
    if (ids === undefined) return;
    for (const col of this.#names.values()) {
      const colIds = col.ids[i];
      if (colIds === undefined) continue;
      for (const id of ids) {
        if (colIds.includes(id)) col.warm[i] = (col.warm[i] as number) + 1;
      }
    }
    const added = this.#warmAdded.get(name) ?? new Float64Array(this.#nodes.length);
    added[i] = (added[i] as number) + 1;
    this.#warmAdded.set(name, added);
  }

  #column(name: string): NameColumn {
    const known = this.#names.get(name);
    if (known !== undefined) return known;
    const n = this.#nodes.length;
    const col: NameColumn = {
      ids: new Array<readonly string[] | undefined>(n).fill(undefined),
      warm: new Float64Array(n),
    };
    for (let i = 0; i < n; i++) {
      const node = this.#nodes[i] as ClusterNode;
      const ids = node.templates.get(name);
      col.ids[i] = ids;
      if (ids === undefined) continue;
      let w = 0;
      for (const id of ids) w += node.report.warm[id] ?? 0;
      col.warm[i] = w + this.#recordedWarm(i, ids);
    }
    this.#names.set(name, col);
    return col;
  }

  /** Warm placements recorded on node `i` under any name resolving to one of `ids`. */
  #recordedWarm(i: number, ids: readonly string[]): number {
    let w = 0;
    const node = this.#nodes[i] as ClusterNode;
    for (const [name, added] of this.#warmAdded) {
      const a = added[i] as number;
      if (a === 0) continue;
      for (const id of node.templates.get(name) ?? []) if (ids.includes(id)) w += a;
    }
    return w;
  }

  #baseColumn(base: string): Uint8Array {
    const known = this.#bases.get(base);
    if (known !== undefined) return known;
    const col = Uint8Array.from(this.#nodes, (n) => (n.report.memoryBases.includes(base) ? 1 : 0));
    this.#bases.set(base, col);
    return col;
  }

  /** Load after adding a sandbox (`slots` 1 or 0), or -1 - the reason code. */
  #loadAt(i: number, vcpus: number, memoryMiB: number, slot: number): number {
    if (this.#diskLow[i] === 1) return -1 - DISK;
    const slots =
      ((this.#slotBase[i] as number) + (this.#slotPend[i] as number) + (slot < 0 ? 0 : 1)) /
      (this.#slotCap[i] as number);
    if (slots > 1) return -1 - SLOTS;
    const cpus =
      ((this.#cpuBase[i] as number) + (this.#cpuPend[i] as number) + vcpus) /
      (this.#cpuCap[i] as number);
    if (cpus > 1) return -1 - VCPUS;
    const mem =
      ((this.#memBase[i] as number) + (this.#memPend[i] as number) + memoryMiB) /
      (this.#memCap[i] as number);
    if (mem > 1) return -1 - MEMORY;
    return Math.max(slots, cpus, mem);
  }

  /** The reason code node `i` fails the request's driver, compat or exclude filter for, or -1. */
  #filterNode(i: number, req: PlacementRequest, exclude: Set<string> | undefined): number {
    const node = this.#nodes[i] as ClusterNode;
    if (exclude !== undefined && exclude.has(node.id)) return EXCLUDED;
    if (req.driver !== undefined && node.report.driver !== req.driver) return DRIVER;
    if (req.compat !== undefined && node.report.compat !== req.compat) return COMPAT;
    return -1;
  }

  /**
   * One pass over the nodes: the candidates' positions and loads go to
   * `#found` / `#foundLoad` (their number is returned), the others are
   * counted by reason in `#rejected`.
   */
  #scan(req: PlacementRequest, col: NameColumn | undefined): number {
    const exclude = req.exclude?.length ? new Set(req.exclude) : undefined;
    const filter: ScanFilter = {
      req,
      exclude,
      byNode: exclude !== undefined || req.driver !== undefined || req.compat !== undefined,
      ids: req.requireTemplate === true ? col?.ids : undefined,
    };
    const { vcpus, memoryMiB } = req;
    const rejected = this.#rejected;
    const found = this.#found;
    const foundLoad = this.#foundLoad;
    rejected.fill(0);
    let k = 0;
    for (let i = 0; i < found.length; i++) {
      let r = this.#reasonAt(i, filter);
      if (r < 0) {
        const load = this.#loadAt(i, vcpus, memoryMiB, 1);
        if (load >= 0) {
          found[k] = i;
          foundLoad[k++] = load;
          continue;
        }
        r = -1 - load;
      }
      rejected[r] = (rejected[r] as number) + 1;
    }
    return k;
  }

  /** The reason code node `i` is filtered out for before capacity, or -1. */
  #reasonAt(i: number, f: ScanFilter): number {
    const status = this.#status[i] as number;
    if (status !== 255) return status;
    if (f.byNode) {
      const r = this.#filterNode(i, f.req, f.exclude);
      if (r >= 0) return r;
    }
    if (f.ids !== undefined && f.ids[i] === undefined) return TEMPLATE;
    return -1;
  }

  /** The traits of candidate `k` of the last scan, in the reused object. */
  #traitsOf(k: number, col: NameColumn | undefined, base: Uint8Array | undefined): Traits {
    const t = this.#traits;
    const i = this.#found[k] as number;
    t.load = this.#foundLoad[k] as number;
    t.holdsTemplate = col === undefined || col.ids[i] !== undefined;
    t.warm = col === undefined ? 0 : (col.warm[i] as number);
    t.holdsBase = base !== undefined && base[i] === 1;
    return t;
  }

  #rejections(): Rejections {
    const out: Rejections = {};
    REASONS.forEach((why, r) => {
      const n = this.#rejected[r] as number;
      if (n > 0) out[why] = n;
    });
    return out;
  }

  #chooseFromList(req: PlacementRequest, strategy: PlacementStrategy): Candidate | undefined {
    const { candidates } = this.candidates(req);
    return candidates.length === 0 ? undefined : strategy.choose(candidates, req);
  }

  /** The strategy's choice by position among the candidates of one scan. */
  #choosePositional(
    req: PlacementRequest,
    chooseIn: (set: CandidateSet, req: PlacementRequest) => number,
  ): Candidate | undefined {
    const col = this.#columnOf(req);
    const base = this.#baseOf(req);
    const size = this.#scan(req, col);
    if (size === 0) return undefined;
    const set: CandidateSet = {
      size,
      traits: (k) => this.#traitsOf(k, col, base),
      id: (k) => (this.#nodes[this.#found[k] as number] as ClusterNode).id,
      bound: (k) => this.#bound[this.#found[k] as number] as number,
    };
    const k = chooseIn(set, req);
    return { node: this.nodeAt(this.#found[k] as number), ...this.#traitsOf(k, col, base) };
  }

  #columnOf(req: PlacementRequest): NameColumn | undefined {
    return req.templateId === undefined ? undefined : this.#column(req.templateId);
  }

  #baseOf(req: PlacementRequest): Uint8Array | undefined {
    return req.memoryBase === undefined ? undefined : this.#baseColumn(req.memoryBase);
  }
}
