/**
 * The sandbox record: what the node knows about one sandbox, independent
 * of how it runs. The orchestrator owns every record and persists it (as
 * {@link SandboxDoc}) before acknowledging a change; API views are derived
 * from it (`api/sandbox-view.ts`).
 *
 * @module
 */
import type { SandboxNetwork } from '@aenv/network';
import type { EnvdDefaults } from './envd-client.js';
import type { LifecycleSettings } from './lifecycle-settings.js';
import type { SandboxState } from './sandbox-state.js';

export type { SandboxState } from './sandbox-state.js';

/** A host address where one guest port is reachable. */
export interface GuestAddress {
  readonly host: string;
  readonly port: number;
  /**
   * Identifies the machine instance behind the address. A slot's address is
   * reused by later sandboxes: connection pools are kept per machine so a
   * pooled connection never reaches the wrong one.
   */
  readonly machine?: string;
}

/** Everything the node records about a sandbox. */
export interface SandboxRecord {
  readonly id: string;
  /** The owning tenant; absent = `default` (records from before tenants). */
  readonly tenant?: string | undefined;
  readonly templateId: string;
  readonly alias: string | undefined;
  readonly metadata: Readonly<Record<string, string>>;
  readonly envVars: Readonly<Record<string, string>>;
  /** The template's defaults (env, user, workdir), under `envVars` at every `/init`. */
  readonly envdDefaults?: EnvdDefaults | undefined;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskSizeMiB: number;
  readonly envdVersion: string;
  /**
   * Set when the sandbox is `secure`: envd demands it as `X-Access-Token`.
   * Replaced by `POST /sandboxes/{id}/resume` (the old one stops working;
   * see `Orchestrator.resume`); a fork child gets its own.
   */
  envdAccessToken: string | undefined;
  /**
   * Set when `network.allowPublicTraffic` is false: the proxy demands it as
   * `e2b-traffic-access-token` on every port but envd's.
   */
  readonly trafficAccessToken?: string | undefined;
  /** Egress policy and ingress settings; the egress part can be replaced while running. */
  network: SandboxNetwork;
  readonly lifecycle: LifecycleSettings;
  readonly startedAt: Date;
  /** When the TTL expires (running sandboxes). */
  endAt: Date;
  /** The TTL last asked for, seconds (a resume without one reuses it). */
  timeoutSeconds: number;
  state: SandboxState;
  /** While paused: the snapshot that holds it. */
  pausedSnapshotId: string | undefined;
  /** The snapshot the running machine was restored from (kept until the next pause). */
  sourceSnapshotId: string | undefined;
  pausedAt: Date | undefined;
  /** The sandbox this one was forked from, if any. */
  readonly parentId: string | undefined;
  /** Snapshots this sandbox descends from, oldest first (template, forks, user snapshots). */
  readonly lineage: readonly string[];
  /** Paused by a node shutdown: resumed when the node starts again (if configured). */
  resumeOnStart: boolean;
  /** Why the sandbox is `failed` (its VMM exited unasked, or it was lost with a crashed node). */
  failureReason?: string | undefined;
  /** How long each stage of the last create or resume took, ms. */
  createTimings: Readonly<Record<string, number>>;
}

/** What a create request asks for (already validated). */
export interface CreateSandboxRequest {
  /** The tenant the sandbox will belong to (absent = `default`). */
  readonly tenant?: string | undefined;
  readonly templateId: string;
  /** Seconds until the sandbox times out. */
  readonly timeoutSeconds: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly envVars: Readonly<Record<string, string>>;
  readonly secure: boolean;
  readonly network: SandboxNetwork;
  readonly lifecycle: LifecycleSettings;
}

/** Filters of a list request. */
export interface SandboxFilter {
  readonly states?: readonly SandboxState[];
  /** Every pair must match. */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly templateId?: string;
  readonly startedAfter?: Date;
}

/** The stored form of a record (dates as RFC 3339). */
export type SandboxDoc = Omit<SandboxRecord, 'startedAt' | 'endAt' | 'pausedAt'> & {
  readonly startedAt: string;
  readonly endAt: string;
  readonly pausedAt: string | undefined;
};

/** A record as stored. */
export function toSandboxDoc(r: SandboxRecord): SandboxDoc {
  return {
    ...r,
    startedAt: r.startedAt.toISOString(),
    endAt: r.endAt.toISOString(),
    pausedAt: r.pausedAt?.toISOString(),
  };
}

/** A stored record, live again. */
export function fromSandboxDoc(d: SandboxDoc): SandboxRecord {
  return {
    ...d,
    startedAt: new Date(d.startedAt),
    endAt: new Date(d.endAt),
    pausedAt: d.pausedAt === undefined ? undefined : new Date(d.pausedAt),
  };
}
