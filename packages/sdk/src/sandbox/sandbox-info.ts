/**
 * What the SDK tells about a sandbox, converted from the wire: camelCase
 * ids, dates as `Date`s.
 *
 * @module
 */
import type { ListedSandboxWire, SandboxDetailWire } from '../api/api-wire.js';

/** A sandbox as listed or looked up. */
export interface SandboxInfo {
  readonly sandboxId: string;
  readonly templateId: string;
  readonly alias: string | undefined;
  /** `running` covers starting, resuming, snapshotting and forking; `paused` covers pausing. */
  readonly state: 'running' | 'paused';
  readonly startedAt: Date;
  /** When the TTL expires (for a paused sandbox: when it would have). */
  readonly endAt: Date;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskSizeMB: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly envdVersion: string;
}

/** A sandbox looked up by id: its info plus network and lifecycle settings. */
export interface SandboxDetail extends SandboxInfo {
  readonly allowInternetAccess: boolean | undefined;
  readonly allowOut: readonly string[];
  readonly denyOut: readonly string[];
  readonly onTimeout: 'pause' | 'kill' | undefined;
  readonly autoResume: boolean | undefined;
}

/** Converts a listed sandbox. */
export function toSandboxInfo(w: ListedSandboxWire): SandboxInfo {
  return {
    sandboxId: w.sandboxID,
    templateId: w.templateID,
    alias: w.alias,
    state: w.state,
    startedAt: new Date(w.startedAt),
    endAt: new Date(w.endAt),
    cpuCount: w.cpuCount,
    memoryMB: w.memoryMB,
    diskSizeMB: w.diskSizeMB,
    metadata: w.metadata ?? {},
    envdVersion: w.envdVersion,
  };
}

/** Converts a sandbox detail. */
export function toSandboxDetail(w: SandboxDetailWire): SandboxDetail {
  return {
    ...toSandboxInfo(w),
    allowInternetAccess: w.allowInternetAccess,
    allowOut: w.network?.allowOut ?? [],
    denyOut: w.network?.denyOut ?? [],
    onTimeout: w.lifecycle?.onTimeout,
    autoResume: w.lifecycle?.autoResume,
  };
}
