/**
 * The node daemon's configuration schema: defaults beside each field, a
 * JSON file (`--config`, `AENV_CONFIG`, or `$AENV_HOME/config.json` when it
 * exists) and `AENV_*` environment overrides. Subsystems own their sections
 * and the daemon composes them here (`pool`: the prepared restores of
 * `orchestrator/restore-pool.ts`).
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { networkConfigSchema } from '@aenv/network';
import { field, loadConfig, type ResolvedConfig } from '@aenv/shared';
import { storageConfigSchema } from '@aenv/storage';
import { vmmConfigSchema } from '@aenv/vmm';
import { imageConfigSchema, templateConfigSchema } from './image/image-settings.js';
import { restorePoolConfigSchema } from './orchestrator/restore-pool-config.js';
import { clusterConfigSchema } from './cluster/cluster-config.js';

/** The node daemon's schema. */
export const nodeConfigSchema = {
  home: field.path({
    default: '/var/lib/aenv',
    env: 'AENV_HOME',
    doc: 'State directory: API key, artifacts, sandboxes, NBD sockets, layers and chunk cache (by default), logs.',
  }),
  api: {
    host: field.string({
      default: '127.0.0.1',
      env: 'AENV_HOST',
      doc: 'Address the API listens on.',
    }),
    port: field.integer({
      default: 8000,
      min: 0,
      max: 65535,
      env: 'AENV_PORT',
      doc: 'Port the API listens on (0 = any free port).',
    }),
    domain: field.optionalString({
      default: undefined,
      env: 'AENV_DOMAIN',
      doc: 'Domain of sandbox hosts ({port}-{id}.{domain}) returned to SDKs; unset = the client default.',
    }),
  },
  log: {
    level: field.oneOf(['debug', 'info', 'warn', 'error'], {
      default: 'info',
      env: 'AENV_LOG_LEVEL',
      doc: 'Lowest level written to the log.',
    }),
  },
  sandbox: {
    maxSandboxes: field.integer({
      default: 64,
      min: 1,
      env: 'AENV_MAX_SANDBOXES',
      doc: 'Most sandboxes alive at once on this node.',
    }),
    vcpus: field.integer({ default: 2, min: 1, max: 64, doc: 'vCPUs of the base template.' }),
    memoryMiB: field.integer({
      default: 512,
      min: 64,
      max: 262144,
      doc: 'Guest memory of the base template, MiB.',
    }),
    maxTimeoutSeconds: field.integer({
      default: 86400,
      min: 1,
      doc: 'Longest TTL a client may ask for, seconds.',
    }),
    maxForkCount: field.integer({
      default: 32,
      min: 1,
      max: 100,
      env: 'AENV_MAX_FORK_COUNT',
      doc: 'Most children one fork (or sandboxes one batch create) may ask for on this node (E2B allows up to 100).',
    }),
    startConcurrency: field.integer({
      default: 0,
      min: 0,
      max: 1000,
      env: 'AENV_START_CONCURRENCY',
      doc: 'Most machines the node starts at once, creates, batch members and fork children together (the rest wait their turn, so each start gets the CPU to answer in time); 0: four per CPU core.',
    }),
    metricsIntervalSeconds: field.integer({
      default: 15,
      min: 0,
      max: 3600,
      env: 'AENV_SANDBOX_METRICS_INTERVAL',
      doc: 'How often each running sandbox is sampled for GET /sandboxes/{id}/metrics (0: on demand only).',
    }),
    envdReadyTimeoutMs: field.integer({
      default: 60000,
      min: 1000,
      env: 'AENV_ENVD_READY_TIMEOUT_MS',
      doc: 'How long create waits for envd inside a new sandbox to answer.',
    }),
  },
  lifecycle: {
    defaultOnTimeout: field.oneOf(['pause', 'kill'], {
      default: 'pause',
      env: 'AENV_DEFAULT_ON_TIMEOUT',
      doc: 'What a TTL expiry does when the create request does not say (E2B autoPause): pause keeps everything.',
    }),
    pauseOnShutdown: field.boolean({
      default: true,
      env: 'AENV_PAUSE_ON_SHUTDOWN',
      doc: 'A clean node shutdown pauses running sandboxes (else kills them).',
    }),
    resumeOnStart: field.boolean({
      default: true,
      env: 'AENV_RESUME_ON_START',
      doc: 'At start, resume the sandboxes the last clean shutdown paused.',
    }),
  },
  gc: {
    layers: field.boolean({
      default: true,
      env: 'AENV_LAYER_GC',
      doc: 'Delete disk layers nothing references any more. Turn off when several nodes share one blob store.',
    }),
    protectSeconds: field.integer({
      default: 600,
      min: 0,
      max: 86400,
      env: 'AENV_LAYER_GC_PROTECT_SECONDS',
      doc: 'Layers this node wrote within this many seconds are never collected (covers a seal in flight).',
    }),
  },
  artifacts: {
    dir: field.optionalPath({
      default: undefined,
      env: 'AENV_ARTIFACTS_DIR',
      doc: 'Guest artifact cache (kernel, initramfs, tools and base images); default $AENV_HOME/artifacts.',
    }),
  },
  vmm: vmmConfigSchema,
  pool: restorePoolConfigSchema,
  network: networkConfigSchema,
  storage: storageConfigSchema,
  image: imageConfigSchema,
  template: templateConfigSchema,
  cluster: clusterConfigSchema,
};

/** The loaded node configuration. */
export type NodeConfig = ResolvedConfig<typeof nodeConfigSchema>;

/**
 * Loads the node configuration. The file is `file`, else `AENV_CONFIG`,
 * else `$AENV_HOME/config.json` (or `/var/lib/aenv/config.json`) if present.
 */
export function loadNodeConfig(
  file?: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): NodeConfig {
  const explicit = file ?? env.AENV_CONFIG;
  const implicit = join(resolve(env.AENV_HOME ?? '/var/lib/aenv'), 'config.json');
  const chosen = explicit ?? (existsSync(implicit) ? implicit : undefined);
  return loadConfig(nodeConfigSchema, { file: chosen, env });
}
