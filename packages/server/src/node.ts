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
import { join } from 'node:path';
import { LOG_FIELDS } from '@aenv/shared';
import { ApiKeys } from './api/api-keys.js';
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
import type { NodeState } from './store/node-state.js';

/** What a node is started with. */
export interface StartNodeOptions {
  readonly config: NodeConfig;
  readonly launcher: SandboxLauncher;
  readonly state: NodeState;
  readonly envdVersion: string;
  readonly logger: Logger;
  /** Network slot pool levels for `/metrics`. */
  readonly slotLevels?: () => Readonly<Record<string, number>>;
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
  const { keys, key, created } = ApiKeys.loadOrCreate(apiKeyPath);
  if (created) logger.info('generated API key', { path: apiKeyPath });
  // The metrics read sandbox counts from the orchestrator, which records into the metrics.
  const holder: { orchestrator?: Orchestrator } = {};
  const metrics = new NodeMetrics({
    sandboxesByState: () => holder.orchestrator?.countByState() ?? {},
    ...(options.slotLevels === undefined ? {} : { slots: options.slotLevels }),
  });
  const orchestrator = new Orchestrator({
    launcher: options.launcher,
    sandboxes: state.sandboxes,
    templates: state.templates,
    snapshots: state.snapshots,
    logger,
    metrics,
    envdVersion: options.envdVersion,
    maxSandboxes: config.sandbox.maxSandboxes,
    envdReadyTimeoutMs: config.sandbox.envdReadyTimeoutMs,
    maxForkCount: config.sandbox.maxForkCount,
  });
  holder.orchestrator = orchestrator;
  const toResume = await orchestrator.recover();
  const o = orchestrator;
  const sandboxMetrics = new SandboxMetricsSampler(o, config.sandbox.metricsIntervalSeconds * 1000);
  sandboxMetrics.start();
  const proxy = new SandboxProxy((id, port) => o.addressForTraffic(id, port));
  const domain = config.api.domain ?? null;
  const routes = routeTable({
    orchestrator: o,
    templates: state.templates,
    metrics,
    sandboxMetrics,
    domain,
    maxTimeoutSeconds: config.sandbox.maxTimeoutSeconds,
    defaultOnTimeout: config.lifecycle.defaultOnTimeout,
    home: config.home,
  });
  const api = await startApiServer(
    { routes, keys, proxy, domain, logger, idempotency: new IdempotencyCache(state.db) },
    config.api.host,
    config.api.port,
  );
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
        await o.close({ pauseRunning: config.lifecycle.pauseOnShutdown });
        await api.close();
        proxy.close();
        await options.launcher.close();
        state.close();
      })()),
  };
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
