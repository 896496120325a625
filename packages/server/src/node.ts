/**
 * A node: the API server, the proxy and the orchestrator wired together
 * over a launcher. `startNode` is what `aenv server` runs; tests start
 * nodes on port 0 with a launcher of their choice.
 *
 * @module
 */
import { join } from 'node:path';
import { ApiKeys } from './api/api-keys.js';
import { startApiServer } from './api/api-server.js';
import { routeTable } from './api/route-table.js';
import type { NodeConfig } from './config.js';
import type { Logger } from './log.js';
import type { SandboxLauncher } from './orchestrator/launcher.js';
import { Orchestrator } from './orchestrator/orchestrator.js';
import type { Template } from './orchestrator/template-catalog.js';
import { TemplateCatalog } from './orchestrator/template-catalog.js';
import { SandboxProxy } from './proxy/sandbox-proxy.js';

/** What a node is started with. */
export interface StartNodeOptions {
  readonly config: NodeConfig;
  readonly launcher: SandboxLauncher;
  readonly templates: readonly Template[];
  readonly envdVersion: string;
  readonly logger: Logger;
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
  /** Kills every sandbox, stops listening and releases the launcher. */
  close(): Promise<void>;
}

/** Starts a node. */
export async function startNode(options: StartNodeOptions): Promise<RunningNode> {
  const { config, logger } = options;
  const apiKeyPath = join(config.home, 'api-key');
  const { keys, key, created } = ApiKeys.loadOrCreate(apiKeyPath);
  if (created) logger.info('generated API key', { path: apiKeyPath });
  const orchestrator = new Orchestrator({
    launcher: options.launcher,
    templates: new TemplateCatalog(options.templates),
    logger,
    envdVersion: options.envdVersion,
    maxSandboxes: config.sandbox.maxSandboxes,
    envdReadyTimeoutMs: config.sandbox.envdReadyTimeoutMs,
  });
  const proxy = new SandboxProxy((id, port) => orchestrator.address(id, port));
  const domain = config.api.domain ?? null;
  const routes = routeTable({
    orchestrator,
    domain,
    maxTimeoutSeconds: config.sandbox.maxTimeoutSeconds,
  });
  const api = await startApiServer(
    { routes, keys, proxy, domain, logger },
    config.api.host,
    config.api.port,
  );
  logger.info('node listening', { url: api.url });
  let closing: Promise<void> | undefined;
  return {
    url: api.url,
    apiKey: key,
    apiKeyPath,
    orchestrator,
    close: () =>
      (closing ??= (async () => {
        await orchestrator.close();
        await api.close();
        proxy.close();
        await options.launcher.close();
      })()),
  };
}
