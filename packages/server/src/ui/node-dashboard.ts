/**
 * The node's web dashboard: `@aenv/ui`'s handler mounted at `/ui` of the
 * node's listener, logging in with any valid key of the node's key store
 * (the same rule as `X-API-Key`; a session acts as that key's tenant, and
 * every dashboard request re-checks the key, so revoking it ends its
 * sessions at once), and a metrics history sampled from the node's own
 * Prometheus registry (in process, every few seconds) for the overview's
 * charts. The dashboard calls the node's own API over loopback with the
 * session's key, so it sees exactly what an API client sees.
 *
 * @module
 */
import { createUiHandler, MetricsHistory, type UiHandler } from '@aenv/ui';
import type { ApiKeys } from '../api/api-keys.js';
import type { Logger } from '../log.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';

/** What the dashboard of a node needs. */
export interface NodeDashboardOptions {
  readonly keys: ApiKeys;
  readonly metrics: NodeMetrics;
  /** The node's own URL, known once it listens. */
  readonly apiUrl: () => string;
  readonly logger: Logger;
  /** How often the charts' history samples the metrics. @default 5000 */
  readonly historyIntervalMs?: number;
}

/** A node's mounted dashboard. */
export interface NodeDashboard {
  readonly handler: UiHandler;
  readonly history: MetricsHistory;
  /** Stops sampling and ends live streams and terminals. */
  close(): void;
}

/** Creates the dashboard of a node and starts its metrics history. */
export function nodeDashboard(o: NodeDashboardOptions): NodeDashboard {
  const history = new MetricsHistory({
    source: () => o.metrics.render(),
    ...(o.historyIntervalMs === undefined ? {} : { intervalMs: o.historyIntervalMs }),
  });
  history.start();
  const handler = createUiHandler({
    kind: 'node',
    checkKey: (key) => {
      try {
        o.keys.check(key); // a revoked key fails here, ending its sessions
        return true;
      } catch {
        return false;
      }
    },
    apiUrl: () => loopbackOf(o.apiUrl()),
    history,
    logger: o.logger,
  });
  return {
    handler,
    history,
    close: () => {
      history.stop();
      handler.close();
    },
  };
}

/** The node's URL as reached from this process: a wildcard listen address becomes loopback. */
export function loopbackOf(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
  else if (u.hostname === '[::]') u.hostname = '[::1]';
  return u.origin;
}
