/**
 * A node as the control plane sees it: its last heartbeat report, whether
 * that report is still alive (its TTL key exists), the status that follows
 * (`ready`, `draining`, or `lost`), and the placements made there since the
 * report (the report lags up to one heartbeat; placements fill the gap).
 *
 * @module
 */
import { toNodeView, type NodeReport, type NodeTemplate, type NodeView } from '@aenv/shared';

/** What the control plane shows of a node. */
export type ClusterNodeStatus = 'ready' | 'draining' | 'lost';

/** Resources of placements the report does not include yet. */
export interface PendingUse {
  readonly count: number;
  readonly vcpus: number;
  readonly memoryMiB: number;
}

/** A node with its state in the cluster. */
export interface ClusterNode {
  readonly id: string;
  /** The live report, or the last one of a lost node. */
  readonly report: NodeReport;
  readonly alive: boolean;
  readonly status: ClusterNodeStatus;
  /** Sandboxes bound to it in the cluster state. */
  readonly bound: number;
  /** Creates placed on it after its report was taken. */
  readonly pending: PendingUse;
  /** Its templates' ids by id and by alias (placement looks them up for every node). */
  readonly templates: ReadonlyMap<string, readonly string[]>;
}

/** Indexes a report's templates by id and alias. */
export function indexTemplates(templates: readonly NodeTemplate[]): Map<string, readonly string[]> {
  const index = new Map<string, string[]>();
  for (const t of templates) {
    for (const name of new Set([t.id, ...t.aliases]))
      index.set(name, [...(index.get(name) ?? []), t.id]);
  }
  return index;
}

/** No pending placements. */
export const NO_PENDING: PendingUse = { count: 0, vcpus: 0, memoryMiB: 0 };

/** The status a node shows: lost when its report expired, else its admin status. */
export function statusOf(
  alive: boolean,
  admin: 'ready' | 'draining' | undefined,
  report: NodeReport,
): ClusterNodeStatus {
  if (!alive) return 'lost';
  return admin ?? report.status;
}

/** The `GET /nodes` JSON of a node (see `toNodeView`). */
export function nodeView(n: ClusterNode): NodeView {
  return toNodeView(n.report, n.status, n.pending.count);
}
