/**
 * The shapes the dashboard's server side sends to the page and the page
 * reads from the API, shared by both (this file has no runtime code and
 * imports nothing, so the browser build can take it).
 *
 * @module
 */

/** One interval of the charts' history (see `metrics/metrics-history.ts`). */
export interface HistoryPoint {
  /** End of the interval, ms since the epoch. */
  readonly t: number;
  /** Length of the interval, seconds. */
  readonly intervalS: number;
  readonly createsPerSec: number;
  readonly resumesPerSec: number;
  /** Latency quantiles in ms; null when no operation finished in the interval. */
  readonly createP50Ms: number | null;
  readonly createP99Ms: number | null;
  readonly resumeP50Ms: number | null;
  readonly resumeP99Ms: number | null;
  /** Operations that failed in the interval (any kind). */
  readonly failures: number;
  /** Sandboxes with a machine, and paused ones, at the end of the interval. */
  readonly running: number;
  readonly paused: number;
}

/** A sandbox as the live feed sends it: the list's fields plus the detail's lineage. */
export interface UiSandbox {
  readonly sandboxID: string;
  readonly templateID: string;
  readonly alias?: string;
  readonly state: 'running' | 'paused';
  readonly startedAt: string;
  readonly endAt: string;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskSizeMB: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly envdVersion?: string;
  readonly parentSandboxID?: string;
  /** Snapshots this sandbox descends from, oldest first. */
  readonly lineage?: readonly string[];
  readonly network?: unknown;
  readonly lifecycle?: { readonly onTimeout: string; readonly autoResume: boolean };
}

/** A user snapshot (`GET /snapshots`). */
export interface UiSnapshot {
  readonly snapshotID: string;
  readonly names: readonly string[];
  readonly sandboxID?: string;
  readonly templateID: string;
  readonly createdAt: string;
  readonly lineage: readonly string[];
}
