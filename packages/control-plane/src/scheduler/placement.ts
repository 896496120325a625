/**
 * Placement, as pure functions over node views: which nodes can take a
 * sandbox (status, driver, snapshot compatibility, template, capacity) and
 * how loaded each would be with it. Strategies (`strategies.ts`) choose
 * among the candidates; the scheduler (`scheduler.ts`) reads the cluster
 * state and records the choice. The simulation benchmark
 * (`bench/scheduler-sim.mjs`) runs these same functions on synthetic nodes.
 *
 * Capacity: a node takes a sandbox when it has a free slot
 * (`sandbox.maxSandboxes`), enough vCPUs and memory after overcommit (most
 * sandboxes idle, and restored clones share their template's memory pages)
 * and at least `minDiskFreeMiB` of disk. Load is the fullest of slots,
 * vCPUs and memory after the placement, from 0 (empty) to 1 (full).
 *
 * @module
 */
import type { ClusterNode, PendingUse } from '../state/cluster-node.js';

/** What a placement asks for. */
export interface PlacementRequest {
  /** Resources of the sandbox (the template's shape). */
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** Template id or alias it is created from (affinity; required when `requireTemplate`). */
  readonly templateId?: string | undefined;
  /** Only nodes holding the template qualify. */
  readonly requireTemplate?: boolean | undefined;
  /** `memory.baseId` of the snapshot it restores (affinity: nodes holding it fetch less). */
  readonly memoryBase?: string | undefined;
  /** Only nodes with this compat key (snapshots moving between nodes). */
  readonly compat?: string | undefined;
  /** Only nodes running this VMM driver. */
  readonly driver?: string | undefined;
  /** Never these nodes. */
  readonly exclude?: readonly string[] | undefined;
}

/** Limits that turn node capacity into what may be placed. */
export interface PlacementLimits {
  /** vCPUs placed per host CPU. @default 8 */
  readonly cpuOvercommit: number;
  /** Guest memory placed per MiB of host memory. @default 2 */
  readonly memoryOvercommit: number;
  /** A node with less free disk takes nothing new, MiB. @default 1024 */
  readonly minDiskFreeMiB: number;
}

/** The default limits. */
export const DEFAULT_LIMITS: PlacementLimits = {
  cpuOvercommit: 8,
  memoryOvercommit: 2,
  minDiskFreeMiB: 1024,
};

/** What strategies weigh of a candidate. */
export interface CandidateTraits {
  /** Load after the placement, 0..1 (the fullest resource). */
  readonly load: number;
  /** It holds the template (or no template was named). */
  readonly holdsTemplate: boolean;
  /** Its running sandboxes of the template (warm layers and memory pages). */
  readonly warm: number;
  /** It holds the snapshot's memory base file. */
  readonly holdsBase: boolean;
}

/** A node that can take the sandbox. */
export interface Candidate extends CandidateTraits {
  readonly node: ClusterNode;
}

/** Why nodes were passed over, counted by reason. */
export type Rejections = Partial<Record<RejectReason, number>>;

/** A reason a node cannot take a sandbox. */
export type RejectReason =
  | 'lost'
  | 'draining'
  | 'excluded'
  | 'driver'
  | 'compat'
  | 'template'
  | 'slots'
  | 'vcpus'
  | 'memory'
  | 'disk';

/** Whether a node holds a template by id or alias. */
export function holdsTemplate(node: ClusterNode, templateId: string): boolean {
  return node.templates.has(templateId);
}

/** Running sandboxes of the template ids `ids` on a node. */
function warmCount(node: ClusterNode, ids: readonly string[] | undefined): number {
  let n = 0;
  for (const id of ids ?? []) n += node.report.warm[id] ?? 0;
  return n;
}

function rejectReason(
  n: ClusterNode,
  req: PlacementRequest,
  exclude: ReadonlySet<string>,
  templateIds: readonly string[] | undefined,
): RejectReason | undefined {
  if (n.status === 'lost') return 'lost';
  if (n.status === 'draining') return 'draining';
  if (exclude.has(n.id)) return 'excluded';
  if (req.driver !== undefined && n.report.driver !== req.driver) return 'driver';
  if (req.compat !== undefined && n.report.compat !== req.compat) return 'compat';
  if (req.requireTemplate === true && req.templateId !== undefined && templateIds === undefined) {
    return 'template';
  }
  return undefined;
}

/** Load after placing `req` on `n`, or the resource that does not fit. */
export function loadWith(
  n: ClusterNode,
  req: Pick<PlacementRequest, 'vcpus' | 'memoryMiB'>,
  limits: PlacementLimits,
): number | RejectReason {
  const { capacity, usage } = n.report;
  const p = n.pending;
  if (usage.diskFreeMiB < limits.minDiskFreeMiB) return 'disk';
  const slots = (usage.running + p.count + 1) / Math.max(1, capacity.slots);
  if (slots > 1) return 'slots';
  const cpuCap = capacity.vcpus * limits.cpuOvercommit;
  const cpus = (usage.vcpus + p.vcpus + req.vcpus) / Math.max(1, cpuCap);
  if (cpus > 1) return 'vcpus';
  const memCap = capacity.memoryMiB * limits.memoryOvercommit;
  const mem = (usage.memoryMiB + p.memoryMiB + req.memoryMiB) / Math.max(1, memCap);
  if (mem > 1) return 'memory';
  return Math.max(slots, cpus, mem);
}

/** The nodes that can take `req`, and why the others cannot. */
export function findCandidates(
  nodes: readonly ClusterNode[],
  req: PlacementRequest,
  limits: PlacementLimits = DEFAULT_LIMITS,
): { candidates: Candidate[]; rejected: Rejections } {
  const candidates: Candidate[] = [];
  const rejected: Rejections = {};
  const exclude = new Set(req.exclude ?? []);
  const { templateId, memoryBase } = req;
  for (const n of nodes) {
    const ids = templateId === undefined ? undefined : n.templates.get(templateId);
    const reason = rejectReason(n, req, exclude, ids);
    const load = reason ?? loadWith(n, req, limits);
    if (typeof load !== 'number') {
      rejected[load] = (rejected[load] ?? 0) + 1;
      continue;
    }
    candidates.push({
      node: n,
      load,
      holdsTemplate: templateId === undefined || ids !== undefined,
      warm: warmCount(n, ids),
      holdsBase: memoryBase !== undefined && n.report.memoryBases.includes(memoryBase),
    });
  }
  return { candidates, rejected };
}

/** A node with one more placement pending (batch planning and the simulation). */
export function withPlacement(
  n: ClusterNode,
  use: { vcpus: number; memoryMiB: number },
): ClusterNode {
  const pending: PendingUse = {
    count: n.pending.count + 1,
    vcpus: n.pending.vcpus + use.vcpus,
    memoryMiB: n.pending.memoryMiB + use.memoryMiB,
  };
  return { ...n, pending };
}

/** "2 draining, 1 full (slots)" for error messages. */
export function describeRejections(rejected: Rejections): string {
  const parts = Object.entries(rejected).map(([why, n]) => `${n} ${why}`);
  return parts.length === 0 ? 'no nodes' : parts.join(', ');
}
