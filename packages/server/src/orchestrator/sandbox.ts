/**
 * The sandbox record: what the node knows about one sandbox, independent
 * of how it runs. The orchestrator owns every record; API views are
 * derived from it (`api/sandbox-view.ts`).
 *
 * @module
 */

/** Lifecycle states. The full state machine arrives with the lifecycle work. */
export type SandboxState = 'creating' | 'running' | 'killing' | 'killed' | 'failed';

import type { SandboxNetwork } from '@aenv/network';

/** A host address where one guest port is reachable. */
export interface GuestAddress {
  readonly host: string;
  readonly port: number;
}

/** Everything the node records about a sandbox. */
export interface SandboxRecord {
  readonly id: string;
  readonly templateId: string;
  readonly alias: string | undefined;
  readonly metadata: Readonly<Record<string, string>>;
  readonly envVars: Readonly<Record<string, string>>;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskSizeMiB: number;
  readonly envdVersion: string;
  /** Set when the sandbox is `secure`: envd demands it as `X-Access-Token`. */
  readonly envdAccessToken: string | undefined;
  /** Egress policy and ingress settings; the egress part can be replaced while running. */
  network: SandboxNetwork;
  readonly startedAt: Date;
  /** How long each create stage took, ms (for logs and benchmarks). */
  createTimings: Readonly<Record<string, number>>;
  /** When the TTL expires. */
  endAt: Date;
  state: SandboxState;
}

/** What a create request asks for (already validated). */
export interface CreateSandboxRequest {
  readonly templateId: string;
  /** Seconds until the sandbox is killed. */
  readonly timeoutSeconds: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly envVars: Readonly<Record<string, string>>;
  readonly secure: boolean;
  readonly network: SandboxNetwork;
}

/** Filters of a list request. */
export interface SandboxFilter {
  readonly states?: readonly SandboxState[];
  /** Every pair must match. */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly templateId?: string;
  readonly startedAfter?: Date;
}
