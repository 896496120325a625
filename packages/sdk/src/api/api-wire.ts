/**
 * The JSON shapes of the node's REST API (E2B's `Sandbox`, `ListedSandbox`,
 * `SandboxDetail`, and aenv's snapshot, template, fork and node answers),
 * as plain types. The node's OpenAPI document (`GET /openapi.json`) is the
 * contract; these mirror the fields the SDK reads.
 *
 * @module
 */

/** `Sandbox`: the answer of create, connect and resume. */
export interface SandboxWire {
  readonly sandboxID: string;
  readonly templateID: string;
  readonly alias?: string;
  readonly envdVersion: string;
  readonly envdAccessToken?: string;
  readonly trafficAccessToken?: string | null;
  readonly domain?: string | null;
}

/** `ListedSandbox`: one element of a list answer. */
export interface ListedSandboxWire {
  readonly sandboxID: string;
  readonly templateID: string;
  readonly alias?: string;
  readonly startedAt: string;
  readonly endAt: string;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskSizeMB: number;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly state: 'running' | 'paused';
  readonly envdVersion: string;
}

/** `SandboxDetail`: the answer of get. */
export interface SandboxDetailWire extends ListedSandboxWire {
  readonly domain?: string | null;
  readonly envdAccessToken?: string;
  readonly allowInternetAccess?: boolean;
  readonly network?: {
    readonly allowOut?: readonly string[];
    readonly denyOut?: readonly string[];
    readonly allowPublicTraffic?: boolean;
  };
  readonly lifecycle?: { readonly onTimeout: 'pause' | 'kill'; readonly autoResume: boolean };
}

/** A snapshot (`POST /sandboxes/{id}/snapshots`, `GET /snapshots`). */
export interface SnapshotWire {
  readonly snapshotID: string;
  readonly names?: readonly string[];
  readonly sandboxID?: string;
  readonly templateID?: string;
  readonly createdAt?: string;
  readonly lineage?: readonly string[];
}

/** One element of the fork answer: a child, or why it could not be made. */
export interface ForkResultWire {
  readonly sandbox?: SandboxWire;
  readonly error?: {
    readonly code?: number;
    readonly message?: string;
    readonly error_code?: string;
  };
}

/** A template (`GET /templates`). */
export interface TemplateWire {
  readonly templateID: string;
  readonly aliases?: readonly string[];
  readonly names?: readonly string[];
  readonly cpuCount?: number;
  readonly memoryMB?: number;
  readonly diskSizeMB?: number;
  readonly createdAt?: string;
  readonly buildStatus?: string;
  readonly buildID?: string;
}

/** `SandboxMetric`: one resource sample (`GET /sandboxes/{id}/metrics`). */
export interface SandboxMetricWire {
  readonly timestamp: string;
  readonly cpuCount: number;
  readonly cpuUsedPct: number;
  readonly memUsed: number;
  readonly memTotal: number;
  readonly memCache?: number;
  readonly diskUsed: number;
  readonly diskTotal: number;
}

/** A node (`GET /nodes`). */
export interface NodeWire {
  readonly nodeID: string;
  readonly url?: string;
  readonly status?: string;
  readonly sandboxCount?: number;
  readonly cpuCount?: number;
  readonly memoryMB?: number;
  readonly version?: string;
}
