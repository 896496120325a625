/**
 * What a node reports about itself: identity, host capacity, usage, the
 * templates and memory bases it holds and its sandboxes — the heartbeat of
 * a clustered node (`NodeReport`, stored in Redis) and the answer of
 * `GET /nodes` on any node (a standalone node lists itself).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { statfs } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { toNodeView, type NodeReport, type NodeStatus, type NodeView } from '@aenv/shared';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { TemplateCatalog } from '../template/template-catalog.js';

/** Who a node is. */
export interface NodeIdentity {
  readonly id: string;
  /** Where clients (the gateway) reach its API; known once it listens. */
  readonly url: () => string;
  readonly version: string;
  readonly driver: string;
  readonly mode: string;
  /** See {@link compatKey}. */
  readonly compat: string;
  readonly startedAt: string;
}

/** The host's resources. */
export interface HostCapacity {
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskMiB: number;
  readonly diskFreeMiB: number;
}

/** What snapshot compatibility depends on (see `NodeReport.compat`). */
export interface CompatInputs {
  readonly driver: string;
  readonly mode: string;
  /** Boot files as snapshots record them: paths and digests. */
  readonly kernel: string;
  readonly kernelDigest: string;
  readonly initrd: string;
  readonly initrdDigest: string;
  readonly toolsDigest: string;
}

/**
 * The compat key: snapshots restore on a node only with the same VMM
 * driver and mode and the same boot files at the same paths (a snapshot
 * manifest names them by path and digest) and tools image.
 */
export function compatKey(c: CompatInputs): string {
  const text = JSON.stringify([
    c.driver,
    c.mode,
    c.kernel,
    c.kernelDigest,
    c.initrd,
    c.initrdDigest,
    c.toolsDigest,
  ]);
  return `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/** CPUs, memory and the disk of `dir`. */
export async function hostCapacity(dir: string): Promise<HostCapacity> {
  const fs = await statfs(dir).catch(() => undefined);
  const mib = (blocks: number, size: number): number => Math.floor((blocks * size) / 2 ** 20);
  return {
    vcpus: cpus().length,
    memoryMiB: Math.floor(totalmem() / 2 ** 20),
    diskMiB: fs === undefined ? 0 : mib(fs.blocks, fs.bsize),
    diskFreeMiB: fs === undefined ? 0 : mib(fs.bavail, fs.bsize),
  };
}

/** What a report is built from besides the orchestrator. */
export interface ReportInputs {
  readonly identity: NodeIdentity;
  readonly orchestrator: Orchestrator;
  readonly templates: TemplateCatalog;
  readonly host: HostCapacity;
  /** `sandbox.maxSandboxes`. */
  readonly slots: number;
  readonly status: NodeStatus;
  readonly memoryBases: readonly string[];
}

/** The node's report now. */
export function nodeReport(i: ReportInputs): NodeReport {
  const records = i.orchestrator.list();
  let running = 0;
  let paused = 0;
  let vcpus = 0;
  let memoryMiB = 0;
  const warm: Record<string, number> = {};
  for (const r of records) {
    if (r.state === 'paused') {
      paused++;
      continue;
    }
    running++;
    vcpus += r.vcpus;
    memoryMiB += r.memoryMiB;
    warm[r.templateId] = (warm[r.templateId] ?? 0) + 1;
  }
  // Sandboxes being created are not listed yet but hold a machine.
  running += i.orchestrator.countByState().creating ?? 0;
  return {
    id: i.identity.id,
    url: i.identity.url(),
    version: i.identity.version,
    driver: i.identity.driver,
    mode: i.identity.mode,
    compat: i.identity.compat,
    status: i.status,
    startedAt: i.identity.startedAt,
    reportedAt: new Date().toISOString(),
    capacity: {
      vcpus: i.host.vcpus,
      memoryMiB: i.host.memoryMiB,
      diskMiB: i.host.diskMiB,
      slots: i.slots,
    },
    usage: { running, paused, vcpus, memoryMiB, diskFreeMiB: i.host.diskFreeMiB },
    templates: i.templates.list().map((t) => ({
      id: t.id,
      aliases: t.alias === undefined ? [] : [t.alias],
      snapshotId: t.snapshotId,
      vcpus: t.vcpus,
      memoryMiB: t.memoryMiB,
    })),
    warm,
    memoryBases: i.memoryBases,
    sandboxes: records.map((r) => ({ id: r.id, state: r.state })),
  };
}

/** What {@link describeNode} needs. */
export interface DescribeInputs {
  readonly identity: NodeIdentity;
  readonly orchestrator: Orchestrator;
  readonly templates: TemplateCatalog;
  readonly slots: number;
  readonly status: NodeStatus;
  /** Directory whose disk is reported. */
  readonly home: string;
}

/** The `GET /nodes` view of this node. */
export async function describeNode(i: DescribeInputs): Promise<NodeView> {
  const report = nodeReport({ ...i, host: await hostCapacity(i.home), memoryBases: [] });
  return toNodeView(report, i.status);
}
