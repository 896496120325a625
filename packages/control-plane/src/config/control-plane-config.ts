/**
 * Configuration of the control plane's two processes — `aenv gateway`
 * (the node API in front of the cluster) and `aenv scheduler` (the
 * reconciliation loop) — as one schema: defaults beside each field, a JSON
 * file, `AENV_*` environment overrides. The Redis URL and key prefix use
 * the same variables as the nodes' `cluster` section.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import {
  AenvError,
  DEFAULT_CLUSTER_KEY_PREFIX,
  field,
  loadConfig,
  type ResolvedConfig,
  type TenantQuotas,
} from '@aenv/shared';
import { STRATEGY_NAMES } from '../scheduler/strategies.js';

/** The control plane's schema. */
export const controlPlaneConfigSchema = {
  cluster: {
    redisUrl: field.string({
      default: 'redis://127.0.0.1:6379',
      env: 'AENV_CLUSTER_REDIS_URL',
      doc: 'Redis of the cluster (redis://host:port, rediss://..., unix:///path).',
    }),
    keyPrefix: field.string({
      default: DEFAULT_CLUSTER_KEY_PREFIX,
      env: 'AENV_CLUSTER_KEY_PREFIX',
      doc: 'Prefix of every Redis key of the cluster.',
    }),
    nodeApiKey: field.optionalString({
      default: undefined,
      env: 'AENV_CLUSTER_API_KEY',
      doc: "Key the gateway and scheduler call nodes with (the nodes' cluster.apiKey).",
    }),
    nodeApiKeyFile: field.optionalPath({
      default: undefined,
      env: 'AENV_CLUSTER_API_KEY_FILE',
      doc: 'File holding that key (a mounted secret), instead of nodeApiKey.',
    }),
  },
  gateway: {
    host: field.string({ default: '127.0.0.1', env: 'AENV_GATEWAY_HOST', doc: 'Listen address.' }),
    port: field.integer({
      default: 8080,
      min: 0,
      max: 65535,
      env: 'AENV_GATEWAY_PORT',
      doc: 'Listen port (0 = any free port).',
    }),
    domain: field.optionalString({
      default: undefined,
      env: 'AENV_GATEWAY_DOMAIN',
      doc: 'Domain of sandbox hosts ({port}-{id}.{domain}) returned to SDKs; unset = the nodes answer.',
    }),
    apiKeys: field.list({
      default: [],
      env: 'AENV_GATEWAY_API_KEYS',
      doc: 'Client keys: KEY (tenant default) or TENANT=KEY, comma-separated in the environment.',
    }),
    apiKeyFile: field.optionalPath({
      default: undefined,
      env: 'AENV_GATEWAY_API_KEY_FILE',
      doc: 'File with more client keys, one KEY or TENANT=KEY per line.',
    }),
    requestTimeoutSeconds: field.integer({
      default: 600,
      min: 1,
      env: 'AENV_GATEWAY_REQUEST_TIMEOUT_SECONDS',
      doc: 'Longest a forwarded control-plane call may take (streams and the data plane are exempt).',
    }),
  },
  tenants: {
    maxSandboxes: field.integer({
      default: 0,
      min: 0,
      env: 'AENV_TENANT_MAX_SANDBOXES',
      doc: "Default quota: most sandboxes (running or paused) one tenant may have; 0 = no limit. A tenant's own quotas (/admin/tenants) win.",
    }),
    limits: field.list({
      default: [],
      env: 'AENV_TENANT_LIMITS',
      doc: 'Per-tenant defaults overriding maxSandboxes: TENANT=N.',
    }),
    maxVcpus: field.integer({
      default: 0,
      min: 0,
      env: 'AENV_TENANT_MAX_VCPUS',
      doc: "Default quota: vCPUs of one tenant's running sandboxes, summed; 0 = no limit.",
    }),
    maxMemoryMB: field.integer({
      default: 0,
      min: 0,
      env: 'AENV_TENANT_MAX_MEMORY_MB',
      doc: "Default quota: memory (MiB) of one tenant's running sandboxes, summed; 0 = no limit.",
    }),
    createsPerSecond: field.integer({
      default: 0,
      min: 0,
      env: 'AENV_TENANT_CREATES_PER_SECOND',
      doc: 'Default quota: sandbox creates (forks included) per second of one tenant; 0 = no limit.',
    }),
  },
  scheduler: {
    strategy: field.oneOf(STRATEGY_NAMES, {
      default: 'spread',
      env: 'AENV_SCHEDULER_STRATEGY',
      doc: 'Placement strategy: spread, pack, round-robin or random.',
    }),
    cpuOvercommit: field.integer({
      default: 8,
      min: 1,
      max: 64,
      env: 'AENV_SCHEDULER_CPU_OVERCOMMIT',
      doc: 'vCPUs placed per host CPU.',
    }),
    memoryOvercommitPercent: field.integer({
      default: 200,
      min: 10,
      max: 2000,
      env: 'AENV_SCHEDULER_MEMORY_OVERCOMMIT_PERCENT',
      doc: 'Guest memory placed per host memory, percent (clones share their template pages).',
    }),
    minDiskFreeMiB: field.integer({
      default: 1024,
      min: 0,
      env: 'AENV_SCHEDULER_MIN_DISK_FREE_MIB',
      doc: 'A node with less free disk takes no new sandbox.',
    }),
    affinityPercent: field.integer({
      default: 5,
      min: 0,
      max: 100,
      env: 'AENV_SCHEDULER_AFFINITY_PERCENT',
      doc: 'Load credit (percent of a node) for holding the memory base or running the template.',
    }),
    intervalSeconds: field.integer({
      default: 5,
      min: 1,
      max: 600,
      env: 'AENV_SCHEDULER_INTERVAL_SECONDS',
      doc: 'How often the scheduler reconciles bindings with node reports.',
    }),
    healthPort: field.integer({
      default: 0,
      min: 0,
      max: 65535,
      env: 'AENV_SCHEDULER_HEALTH_PORT',
      doc: "Port of the scheduler's GET /health (for probes); 0 = none.",
    }),
    lostForgetSeconds: field.integer({
      default: 3600,
      min: 60,
      env: 'AENV_SCHEDULER_LOST_FORGET_SECONDS',
      doc: 'Running sandboxes of a node lost this long are unbound (they died with it).',
    }),
  },
  log: {
    level: field.oneOf(['debug', 'info', 'warn', 'error'], {
      default: 'info',
      env: 'AENV_LOG_LEVEL',
      doc: 'Lowest level written to the log.',
    }),
  },
};

/** The loaded control-plane configuration. */
export type ControlPlaneConfig = ResolvedConfig<typeof controlPlaneConfigSchema>;

/** Loads the configuration from an optional JSON file and the environment. */
export function loadControlPlaneConfig(
  file?: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ControlPlaneConfig {
  return loadConfig(controlPlaneConfigSchema, { file: file ?? env.AENV_CONTROL_PLANE_CONFIG, env });
}

/**
 * The key nodes are called with.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` when neither the key nor its file is set.
 */
export function nodeApiKey(config: ControlPlaneConfig): string {
  const c = config.cluster;
  const key =
    c.nodeApiKey ??
    (c.nodeApiKeyFile === undefined ? undefined : readFileSync(c.nodeApiKeyFile, 'utf8').trim());
  if (key === undefined || key === '') {
    throw new AenvError(
      'CONFIG_INVALID_VALUE',
      "config key 'cluster.nodeApiKey': the key nodes accept (their cluster.apiKey) is required",
      { fields: { key: 'cluster.nodeApiKey' } },
    );
  }
  return key;
}

/**
 * The default quotas of a tenant from the configuration (`tenants.*`, with
 * `tenants.limits` overriding `maxSandboxes` per tenant); 0 = none.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` for a bad `tenants.limits` entry.
 */
export function tenantQuotaDefaults(config: ControlPlaneConfig): (tenant: string) => TenantQuotas {
  const overrides = new Map<string, number>();
  for (const entry of config.tenants.limits) {
    const [name, n] = entry.split('=');
    const limit = Number(n);
    if (name === undefined || name === '' || !Number.isInteger(limit) || limit < 0) {
      throw new AenvError(
        'CONFIG_INVALID_VALUE',
        `config key 'tenants.limits': bad entry '${entry}' (TENANT=N)`,
        {
          fields: { key: 'tenants.limits' },
        },
      );
    }
    overrides.set(name, limit);
  }
  const t = config.tenants;
  return (tenant) => ({
    maxSandboxes: overrides.get(tenant) ?? t.maxSandboxes,
    maxVcpus: t.maxVcpus,
    maxMemoryMB: t.maxMemoryMB,
    createsPerSecond: t.createsPerSecond,
  });
}
