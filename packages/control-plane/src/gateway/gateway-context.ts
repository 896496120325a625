/**
 * What every gateway handler works with: the cluster state, the scheduler,
 * the node client, tenants and quotas, and the request at hand (its
 * caller included). Handlers get a {@link Gateway} whose `nodes` act for
 * the request's tenant (every node call carries `x-aenv-tenant`).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ClusterState } from '../state/cluster-state.js';
import type { Caller } from '../tenants/tenant-auth.js';
import type { TenantQuotaGate } from '../tenants/tenant-quota.js';
import type { TenantStore } from '../tenants/tenant-store.js';
import type { GatewayMetrics } from './gateway-metrics.js';
import type { NodeClient } from './node-client.js';

/** The gateway's shared parts. */
export interface Gateway {
  readonly state: ClusterState;
  readonly scheduler: Scheduler;
  readonly nodes: NodeClient;
  readonly tenants: TenantStore;
  readonly quota: TenantQuotaGate;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** Domain returned to SDKs in sandbox answers; null = what the node answered. */
  readonly domain: string | null;
}

/** One authenticated control-plane request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly tenant: string;
  /** Who sent it (its tenant is `tenant`). */
  readonly caller: Caller;
  /** Path parameters of the matched route. */
  readonly params: Readonly<Record<string, string>>;
}
