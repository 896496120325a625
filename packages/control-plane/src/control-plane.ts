/**
 * Starting the control plane's processes from their configuration: the
 * gateway (`aenv gateway`) and the scheduler loop (`aenv scheduler`).
 * Each opens its own Redis connection; both may run in one process.
 *
 * @module
 */
import { createServer, type Server } from 'node:http';
import { LOG_FIELDS } from '@aenv/shared';
import {
  nodeApiKey,
  tenantQuotaDefaults,
  type ControlPlaneConfig,
} from './config/control-plane-config.js';
import { startGateway, type RunningGateway } from './gateway/gateway-server.js';
import { NodeClient } from './gateway/node-client.js';
import { TenantKeys } from './gateway/tenant-keys.js';
import { errorFields, type Logger } from './log.js';
import { Reconciler } from './scheduler/reconciler.js';
import { Scheduler } from './scheduler/scheduler.js';
import { createStrategy } from './scheduler/strategies.js';
import { ClusterState } from './state/cluster-state.js';
import { connectRedis, redactUrl } from './state/redis-connection.js';

/** A scheduler from the configuration, over `state`. */
export function schedulerOf(config: ControlPlaneConfig, state: ClusterState): Scheduler {
  const s = config.scheduler;
  return new Scheduler({
    state,
    strategy: createStrategy(s.strategy, { affinityWeight: s.affinityPercent / 100 }),
    limits: {
      cpuOvercommit: s.cpuOvercommit,
      memoryOvercommit: s.memoryOvercommitPercent / 100,
      minDiskFreeMiB: s.minDiskFreeMiB,
    },
  });
}

async function openState(
  config: ControlPlaneConfig,
  name: string,
  logger: Logger,
): Promise<ClusterState> {
  const redis = await connectRedis(config.cluster.redisUrl, name, (err) =>
    logger.warn('redis connection', errorFields(err)),
  );
  logger.info('connected to the cluster state', { redis: redactUrl(config.cluster.redisUrl) });
  return new ClusterState(redis, config.cluster.keyPrefix);
}

/**
 * Runs a gateway.
 * @throws {AenvError} `CONFIG_INVALID_VALUE`, `CLUSTER_STATE_UNAVAILABLE`.
 */
export async function runGateway(
  config: ControlPlaneConfig,
  logger: Logger,
): Promise<RunningGateway> {
  const keys = TenantKeys.load(config.gateway.apiKeys, config.gateway.apiKeyFile);
  const key = nodeApiKey(config);
  const state = await openState(config, 'gateway', logger);
  const gateway = await startGateway({
    state,
    scheduler: schedulerOf(config, state),
    keys,
    tenantDefaults: tenantQuotaDefaults(config),
    nodeApiKey: key,
    logger,
    host: config.gateway.host,
    port: config.gateway.port,
    domain: config.gateway.domain,
    requestTimeoutMs: config.gateway.requestTimeoutSeconds * 1000,
  });
  return {
    ...gateway,
    close: async () => {
      await gateway.close();
      state.redis.disconnect();
    },
  };
}

/** A running scheduler loop. */
export interface RunningScheduler {
  readonly reconciler: Reconciler;
  close(): Promise<void>;
}

/**
 * Runs the scheduler loop.
 * @throws {AenvError} `CONFIG_INVALID_VALUE`, `CLUSTER_STATE_UNAVAILABLE`.
 */
export async function runScheduler(
  config: ControlPlaneConfig,
  logger: Logger,
): Promise<RunningScheduler> {
  const nodes = new NodeClient({ apiKey: nodeApiKey(config), timeoutMs: 30_000 });
  const state = await openState(config, 'scheduler', logger);
  const reconciler = new Reconciler({
    state,
    logger,
    intervalMs: config.scheduler.intervalSeconds * 1000,
    lostForgetMs: config.scheduler.lostForgetSeconds * 1000,
    release: async (node, id) => {
      const answer = await nodes.json(
        node.report.url,
        'POST',
        `/cluster/sandboxes/${encodeURIComponent(id)}/release`,
      );
      if (answer.status >= 300) {
        logger.warn('a node did not release a sandbox bound elsewhere', {
          [LOG_FIELDS.nodeId]: node.id,
          [LOG_FIELDS.sandboxId]: id,
          status: answer.status,
        });
      }
    },
  });
  reconciler.start();
  const health = await healthServer(config.scheduler.healthPort, () => ({
    status: 'ok',
    active: reconciler.active,
  }));
  logger.info('scheduler loop started', { intervalSeconds: config.scheduler.intervalSeconds });
  return {
    reconciler,
    close: async () => {
      await new Promise<void>((resolve) =>
        health === undefined ? resolve() : health.close(() => resolve()),
      );
      await reconciler.close();
      nodes.close();
      state.redis.disconnect();
    },
  };
}

/** `GET /health` on `port` (0: none), answering `body()`. */
async function healthServer(port: number, body: () => unknown): Promise<Server | undefined> {
  if (port === 0) return undefined;
  const server = createServer((req, res) => {
    const ok = req.url === '/health';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? body() : { code: 404, message: 'not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve());
  });
  return server;
}
