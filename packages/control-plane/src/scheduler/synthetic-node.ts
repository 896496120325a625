/**
 * Synthetic nodes: node views with made-up reports, for placement tests
 * and the scheduler simulation (`bench/scheduler-sim.mjs`). Nothing runs
 * behind them.
 *
 * @module
 */
import type { NodeReport } from '@aenv/shared';
import { NO_PENDING, indexTemplates, type ClusterNode } from '../state/cluster-node.js';

/** What a synthetic node may override. */
export interface SyntheticNodeOptions {
  readonly vcpus?: number;
  readonly memoryMiB?: number;
  readonly slots?: number;
  readonly diskFreeMiB?: number;
  readonly running?: number;
  readonly usedVcpus?: number;
  readonly usedMemoryMiB?: number;
  readonly status?: ClusterNode['status'];
  readonly driver?: string;
  readonly compat?: string;
  readonly templates?: readonly string[];
  readonly warm?: Readonly<Record<string, number>>;
  readonly memoryBases?: readonly string[];
  readonly bound?: number;
}

const DEFAULTS: Required<SyntheticNodeOptions> = {
  vcpus: 32,
  memoryMiB: 131_072,
  slots: 256,
  diskFreeMiB: 500_000,
  running: 0,
  usedVcpus: 0,
  usedMemoryMiB: 0,
  status: 'ready',
  driver: 'qemu',
  compat: 'c1',
  templates: ['base'],
  warm: {},
  memoryBases: [],
  bound: 0,
};

/** A node view with a made-up report. */
export function syntheticNode(id: string, options: SyntheticNodeOptions = {}): ClusterNode {
  const o = { ...DEFAULTS, ...options };
  const now = new Date().toISOString();
  const report: NodeReport = {
    id,
    url: `http://${id}.invalid:8000`,
    version: '0.0.0',
    driver: o.driver,
    mode: 'tcg',
    compat: o.compat,
    status: o.status === 'draining' ? 'draining' : 'ready',
    startedAt: now,
    reportedAt: now,
    capacity: { vcpus: o.vcpus, memoryMiB: o.memoryMiB, diskMiB: 1_000_000, slots: o.slots },
    usage: {
      running: o.running,
      paused: 0,
      vcpus: o.usedVcpus,
      memoryMiB: o.usedMemoryMiB,
      diskFreeMiB: o.diskFreeMiB,
    },
    templates: o.templates.map((t) => ({ id: t, aliases: [t], snapshotId: `s-${t}` })),
    warm: o.warm,
    memoryBases: o.memoryBases,
    sandboxes: [],
  };
  return {
    id,
    report,
    alive: o.status !== 'lost',
    status: o.status,
    bound: o.bound,
    pending: NO_PENDING,
    templates: indexTemplates(report.templates),
  };
}
