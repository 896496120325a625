/**
 * The E2B JSON shapes of a sandbox record (`Sandbox`, `ListedSandbox`,
 * `SandboxDetail`; e2b-protocol.md §2.2, §2.4, §2.5). `clientID` is always
 * `""`: the Python SDK indexes it.
 *
 * @module
 */
import { toE2bNetwork, type E2bNetworkView } from '@aenv/network';
import type { SandboxRecord } from '../orchestrator/sandbox.js';
import { e2bState } from '../orchestrator/sandbox-state.js';

/** The answer of create and connect. */
export interface SandboxView {
  readonly sandboxID: string;
  readonly templateID: string;
  readonly alias?: string;
  readonly clientID: string;
  readonly envdVersion: string;
  readonly envdAccessToken?: string;
  readonly trafficAccessToken: string | null;
  readonly domain: string | null;
}

/** One element of a list answer. */
export interface ListedSandboxView {
  readonly templateID: string;
  readonly alias?: string;
  readonly sandboxID: string;
  readonly clientID: string;
  readonly startedAt: string;
  readonly endAt: string;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskSizeMB: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly state: 'running' | 'paused';
  readonly envdVersion: string;
  /**
   * aenv: present when the sandbox has failed (its VMM exited unasked, or
   * it was lost with a crashed node): why. E2B's `state` says `running`
   * then (its SDKs know two states); only a kill or the TTL removes it.
   */
  readonly failureReason?: string;
}

/** The answer of get. */
export interface SandboxDetailView extends ListedSandboxView {
  readonly domain: string | null;
  readonly envdAccessToken?: string;
  readonly allowInternetAccess: boolean;
  readonly network: E2bNetworkView;
  readonly lifecycle: { readonly onTimeout: 'pause' | 'kill'; readonly autoResume: boolean };
  /** aenv: the sandbox this one was forked from. */
  readonly parentSandboxID?: string;
  /** aenv: the snapshots this sandbox descends from, oldest first. */
  readonly lineage: readonly string[];
}

/** `Sandbox` for create/connect. */
export function toSandboxView(r: SandboxRecord, domain: string | null): SandboxView {
  return {
    sandboxID: r.id,
    templateID: r.templateId,
    ...(r.alias === undefined ? {} : { alias: r.alias }),
    clientID: '',
    envdVersion: r.envdVersion,
    ...(r.envdAccessToken === undefined ? {} : { envdAccessToken: r.envdAccessToken }),
    trafficAccessToken: r.trafficAccessToken ?? null,
    domain,
  };
}

/** `ListedSandbox` for list. */
export function toListedView(r: SandboxRecord): ListedSandboxView {
  return {
    templateID: r.templateId,
    ...(r.alias === undefined ? {} : { alias: r.alias }),
    sandboxID: r.id,
    clientID: '',
    startedAt: r.startedAt.toISOString(),
    endAt: r.endAt.toISOString(),
    cpuCount: r.vcpus,
    memoryMB: r.memoryMiB,
    diskSizeMB: r.diskSizeMiB,
    metadata: r.metadata,
    state: e2bState(r.state),
    envdVersion: r.envdVersion,
    ...(r.state === 'failed' ? { failureReason: r.failureReason ?? 'failed' } : {}),
  };
}

/** `SandboxDetail` for get. */
export function toDetailView(r: SandboxRecord, domain: string | null): SandboxDetailView {
  return {
    ...toListedView(r),
    domain,
    ...(r.envdAccessToken === undefined ? {} : { envdAccessToken: r.envdAccessToken }),
    allowInternetAccess: r.network.egress.allowInternetAccess,
    network: toE2bNetwork(r.network),
    lifecycle: { onTimeout: r.lifecycle.onTimeout, autoResume: r.lifecycle.autoResume },
    ...(r.parentId === undefined ? {} : { parentSandboxID: r.parentId }),
    lineage: r.lineage,
  };
}
