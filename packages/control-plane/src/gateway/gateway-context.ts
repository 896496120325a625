/**
 * What every gateway handler works with: the cluster state, the scheduler,
 * the node client, and the request at hand (its tenant included).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ClusterState } from '../state/cluster-state.js';
import type { GatewayMetrics } from './gateway-metrics.js';
import type { NodeClient } from './node-client.js';

/** The gateway's shared parts. */
export interface Gateway {
  readonly state: ClusterState;
  readonly scheduler: Scheduler;
  readonly nodes: NodeClient;
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
  /** Path parameters of the matched route. */
  readonly params: Readonly<Record<string, string>>;
}
