/**
 * A node: the API server, the proxy and the orchestrator wired together
 * over a launcher and the node's durable state. `startNode` is what
 * `serveNode` (and so `aenv server`) runs once the machine side is up;
 * tests start nodes on port 0 with a launcher of their choice.
 *
 * At start the orchestrator recovers the previous run's records (paused
 * sandboxes come back paused) and, if configured, resumes those a shutdown
 * paused. At close it pauses (or kills) every running sandbox.
 *
 * @module
 */
import { availableParallelism, hostname } from 'node:os';
import { join } from 'node:path';
import { LOG_FIELDS } from '@aenv/shared';
import { ApiKeys } from './api/api-keys.js';
import { nodeQuotaGuard } from './api/tenant-quotas.js';
import { startApiServer } from './api/api-server.js';
import { IdempotencyCache } from './api/idempotency.js';
import { routeTable } from './api/route-table.js';
import type { NodeConfig } from './config.js';
import { errorFields, type Logger } from './log.js';
import { NodeMetrics } from './metrics/node-metrics.js';
import { SandboxMetricsSampler } from './metrics/sandbox-metrics-sampler.js';
import type { SandboxLauncher } from './orchestrator/launcher.js';
import { Orchestrator } from './orchestrator/orchestrator.js';
import { SandboxProxy } from './proxy/sandbox-proxy.js';
import { trafficAuthorizer } from './proxy/traffic-token.js';
import type { NodeState } from './store/node-state.js';
import { NODE_API_VERSION } from './api/openapi/openapi-document.js';
import type { NodeClusterSeam } from './cluster/cluster-seam.js';
import { describeNode } from './cluster/node-report.js';
import type { ImageService } from './image/image-service.js';
import type { GuestNode } from './template/copy-step.js';
import { templateApi } from './template/template-api.js';
import { nodeDashboard } from './ui/node-dashboard.js';

/** What a node is started with. */
export interface StartNodeOptions {
  readonly config: NodeConfig;
  readonly launcher: SandboxLauncher;
  readonly state: NodeState;
  readonly envdVersion: string;
  readonly logger: Logger;
  /** Network slot pool levels for `/metrics`. */
  readonly slotLevels?: () => Readonly<Record<string, number>>;
  /** Cluster membership (hooks, routes, the gateway's key); absent on a standalone node. */
  readonly cluster?: NodeClusterSeam;
  /** What runs the machines, for `GET /nodes` (driver, mode, snapshot compat key). */
  readonly machine?: { readonly driver: string; readonly mode: string; readonly compat: string };
  /** OCI images; without them the node builds no templates and cold-starts nothing. */
  readonly images?: ImageService;
  /** How template builds run JavaScript in a machine (the tools image's node). */
  readonly guestNode?: GuestNode;
}

/** A running node. */
export interface RunningNode {
  /** Base URL of the API and proxy. */
  readonly url: string;
  /** The API key clients must send. */
  readonly apiKey: string;
  /** Where the API key is stored. */
  readonly apiKeyPath: string;
  readonly orchestrator: Orchestrator;
  readonly metrics: NodeMetrics;
  readonly state: NodeState;
  /** Pauses (or kills) every running sandbox, stops listening, releases the launcher and state. */
  close(): Promise<void>;
}

/** Starts a node. */
export async function startNode(options: StartNodeOptions): Promise<RunningNode> {
  const { config, logger, state } = options;
  const apiKeyPath = join(config.home, 'api-key');
  const clusterKeys = options.cluster?.apiKeys ?? [];
  const opened = ApiKeys.open(state.tenants, apiKeyPath, clusterKeys);
  const { keys: accepted, key, created } = opened;
  if (created) logger.info('generated API key', { path: apiKeyPath });
  // The metrics read sandbox counts from the orchestrator, which records into the metrics.
  const holder: { orchestrator?: Orchestrator } = {};
  const metrics = new NodeMetrics({
    sandboxesByState: () => holder.orchestrator?.countByState() ?? {},
    ...(options.slotLevels === undefined ? {} : { slots: options.slotLevels }),
  });
  const orchestrator = newOrchestrator(options, metrics);
  holder.orchestrator = orchestrator;
  const toResume = await orchestrator.recover();
  await options.cluster?.recovered(orchestrator);
  const o = orchestrator;
  const sandboxMetrics = new SandboxMetricsSampler(o, config.sandbox.metricsIntervalSeconds * 1000);
  sandboxMetrics.start();
  const proxy = new SandboxProxy(
    (id, port) => o.addressForTraffic(id, port),
    trafficAuthorizer((id) => o.find(id)?.trafficAccessToken),
  );
  const domain = config.api.domain ?? null;
  const listening = { url: '' };
  const templating = templateApi({ config, state, orchestrator: o, options, logger });
  const routes = routeTable({
    orchestrator: o,
    templates: state.templates,
    snapshots: state.snapshots,
    tenants: state.tenants,
    quotas: nodeQuotaGuard(state.tenants, o),
    metrics,
    sandboxMetrics,
    domain,
    maxTimeoutSeconds: config.sandbox.maxTimeoutSeconds,
    defaultOnTimeout: config.lifecycle.defaultOnTimeout,
    home: config.home,
    node: () => describeSelf(options, o, listening.url),
    ...templating,
  });
  const dashboard = nodeDashboard({ keys: accepted, metrics, apiUrl: () => listening.url, logger });
  const api = await startApiServer(
    {
      routes: [...routes, ...(options.cluster?.routes(o) ?? [])],
      keys: accepted,
      proxy,
      domain,
      logger,
      idempotency: new IdempotencyCache(state.db),
      ui: dashboard.handler,
    },
    config.api.host,
    config.api.port,
  );
  listening.url = api.url;
  logger.info('node listening', { url: api.url, paused: o.list({ states: ['paused'] }).length });
  if (config.lifecycle.resumeOnStart) resumeInBackground(o, toResume, logger);
  let closing: Promise<void> | undefined;
  return {
    url: api.url,
    apiKey: key,
    apiKeyPath,
    orchestrator: o,
    metrics,
    state,
    close: () =>
      (closing ??= (async () => {
        sandboxMetrics.stop();
        dashboard.close(); // ends live streams and terminals before the sandboxes go
        await templating.templateService?.close(); // builds stop their machines first
        await o.close({ pauseRunning: config.lifecycle.pauseOnShutdown });
        await api.close();
        proxy.close();
        await options.launcher.close();
        state.close();
      })()),
  };
}

function newOrchestrator(options: StartNodeOptions, metrics: NodeMetrics): Orchestrator {
  const { config, state } = options;
  return new Orchestrator({
    launcher: options.launcher,
    sandboxes: state.sandboxes,
    templates: state.templates,
    snapshots: state.snapshots,
    logger: options.logger,
    metrics,
    envdVersion: options.envdVersion,
    maxSandboxes: config.sandbox.maxSandboxes,
    envdReadyTimeoutMs: config.sandbox.envdReadyTimeoutMs,
    maxForkCount: config.sandbox.maxForkCount,
    startConcurrency: config.sandbox.startConcurrency || 4 * availableParallelism(),
    hooks: options.cluster?.hooks,
  });
}

function resumeInBackground(o: Orchestrator, ids: readonly string[], logger: Logger): void {
  void (async () => {
    for (const id of ids) {
      await o.resume(id, undefined).catch((err: unknown) => {
        logger.warn('could not resume a sandbox paused by the last shutdown', {
          [LOG_FIELDS.sandboxId]: id,
          ...errorFields(err),
        });
      });
    }
  })();
}

/** This node as `GET /nodes` shows it. */
function describeSelf(options: StartNodeOptions, o: Orchestrator, url: string) {
  const m = options.machine ?? { driver: 'unknown', mode: 'unknown', compat: '' };
  return describeNode({
    identity: {
      id: options.cluster?.nodeId ?? hostname(),
      url: () => url,
      version: NODE_API_VERSION,
      ...m,
      startedAt: STARTED_AT,
    },
    orchestrator: o,
    templates: options.state.templates,
    slots: options.config.sandbox.maxSandboxes,
    status: options.cluster?.status() ?? 'ready',
    home: options.config.home,
  });
}

const STARTED_AT = new Date().toISOString();
