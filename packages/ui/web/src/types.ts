/**
 * The API shapes the pages read (node views, templates), beside the ones
 * shared with the server side (`src/model/ui-types.ts`).
 *
 * @module
 */
export type { HistoryPoint, UiSandbox, UiSnapshot } from '../../src/model/ui-types.js';

/** `GET /nodes` entries. */
export interface NodeView {
  readonly nodeID: string;
  readonly url: string;
  readonly status: string;
  readonly version: string;
  readonly driver: string;
  readonly mode: string;
  readonly sandboxCount: number;
  readonly sandboxPausedCount: number;
  readonly sandboxStartingCount: number;
  readonly capacity: {
    readonly vcpus: number;
    readonly memoryMiB: number;
    readonly diskMiB: number;
    readonly slots: number;
  };
  readonly usage: {
    readonly running: number;
    readonly paused: number;
    readonly vcpus: number;
    readonly memoryMiB: number;
    readonly diskFreeMiB: number;
  };
  readonly templates: readonly string[];
  readonly startedAt: string;
  readonly heartbeatAt: string;
}

/** `GET /templates` entries. */
export interface TemplateView {
  readonly templateID: string;
  readonly aliases: readonly string[];
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskSizeMB: number;
  readonly createdAt: string;
  readonly buildStatus: string;
  readonly envdVersion: string;
}

/** `GET /sandboxes/{id}/metrics` entries. */
export interface SandboxMetric {
  readonly timestampUnix: number;
  readonly cpuCount: number;
  readonly cpuUsedPct: number;
  readonly memUsed: number;
  readonly memTotal: number;
  readonly diskUsed: number;
  readonly diskTotal: number;
}
