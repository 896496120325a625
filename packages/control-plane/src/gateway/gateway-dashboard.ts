/**
 * The gateway's web dashboard: the same `@aenv/ui` handler a node mounts,
 * at `/ui` of the gateway's listener, logging in with client keys —
 * bootstrap keys and the tenant store's (`TenantAuth.knows`: a revoked key
 * ends its session within about a second). The session is scoped to the
 * key's tenant because every dashboard call goes through the gateway's
 * API with that key. Its charts sum the operation metrics of
 * every live node (`GET /metrics` of each, a public route), sampled every
 * few seconds; a node that does not answer is left out of that point.
 *
 * @module
 */
import { createUiHandler, MetricsHistory, type UiHandler } from '@aenv/ui';
import type { Logger } from '../log.js';
import type { ClusterState } from '../state/cluster-state.js';
import type { TenantAuth } from '../tenants/tenant-auth.js';

/** What the gateway's dashboard needs. */
export interface GatewayDashboardOptions {
  readonly state: ClusterState;
  readonly auth: TenantAuth;
  /** The gateway's own URL, known once it listens. */
  readonly apiUrl: () => string;
  readonly logger: Logger;
  /** @default 5000 */
  readonly historyIntervalMs?: number;
}

/** The gateway's mounted dashboard. */
export interface GatewayDashboard {
  readonly handler: UiHandler;
  close(): void;
}

async function nodeMetricsTexts(state: ClusterState): Promise<string[]> {
  const nodes = (await state.nodes()).filter((n) => n.alive);
  const texts = await Promise.all(
    nodes.map(async (n) => {
      const res = await fetch(new URL('/metrics', n.report.url), {
        signal: AbortSignal.timeout(3000),
      }).catch(() => undefined);
      return res?.ok === true ? res.text() : '';
    }),
  );
  return texts.filter((t) => t !== '');
}

/** Creates the gateway's dashboard and starts its history. */
export function gatewayDashboard(o: GatewayDashboardOptions): GatewayDashboard {
  const history = new MetricsHistory({
    source: () => nodeMetricsTexts(o.state),
    ...(o.historyIntervalMs === undefined ? {} : { intervalMs: o.historyIntervalMs }),
  });
  history.start();
  const handler = createUiHandler({
    kind: 'gateway',
    checkKey: (key) => o.auth.knows(key),
    apiUrl: () => {
      const u = new URL(o.apiUrl());
      if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
      if (u.hostname === '[::]') u.hostname = '[::1]';
      return u.origin;
    },
    history,
    logger: o.logger,
  });
  return {
    handler,
    close: () => {
      history.stop();
      handler.close();
    },
  };
}
