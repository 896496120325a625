/**
 * The `cluster` section of the node configuration: how a node joins a
 * cluster (docs/cluster.md). With `redisUrl` unset (the default) the node
 * is standalone and behaves exactly as without this section.
 *
 * Snapshots that must move between nodes (paused sandboxes, templates)
 * are exported to a shared store: the node's own blob store (`storage`,
 * which must then be S3 or a shared directory) or a shared directory of
 * their own (`fs`).
 *
 * @module
 */
import { hostname } from 'node:os';
import { AenvError, DEFAULT_CLUSTER_KEY_PREFIX, field, type ResolvedConfig } from '@aenv/shared';

/** The schema of the `cluster` section. */
export const clusterConfigSchema = {
  redisUrl: field.optionalString({
    default: undefined,
    env: 'AENV_CLUSTER_REDIS_URL',
    doc: 'Redis of the cluster (redis://host:port, rediss://..., unix:///path); unset = standalone node.',
  }),
  keyPrefix: field.string({
    default: DEFAULT_CLUSTER_KEY_PREFIX,
    env: 'AENV_CLUSTER_KEY_PREFIX',
    doc: 'Prefix of every Redis key of the cluster (several clusters may share one Redis).',
  }),
  nodeId: field.optionalString({
    default: undefined,
    env: 'AENV_CLUSTER_NODE_ID',
    doc: "This node's id in the cluster; default the host name.",
  }),
  advertiseUrl: field.optionalString({
    default: undefined,
    env: 'AENV_CLUSTER_ADVERTISE_URL',
    doc: 'URL the gateway reaches this node at; default the API listen address.',
  }),
  apiKey: field.optionalString({
    default: undefined,
    env: 'AENV_CLUSTER_API_KEY',
    doc: "Key the gateway calls nodes with, accepted besides the node's own.",
  }),
  heartbeatSeconds: field.integer({
    default: 2,
    min: 1,
    max: 60,
    env: 'AENV_CLUSTER_HEARTBEAT_SECONDS',
    doc: 'How often the node reports its capacity, usage and sandboxes.',
  }),
  heartbeatTtlSeconds: field.integer({
    default: 10,
    min: 2,
    max: 600,
    env: 'AENV_CLUSTER_HEARTBEAT_TTL_SECONDS',
    doc: 'A node whose last report is older than this is lost.',
  }),
  sharedStore: field.oneOf(['storage', 'fs'], {
    default: 'storage',
    env: 'AENV_CLUSTER_SHARED_STORE',
    doc: "Where moving snapshots go: the node's blob store (storage: S3 or a shared fs root) or sharedDir.",
  }),
  sharedDir: field.optionalPath({
    default: undefined,
    env: 'AENV_CLUSTER_SHARED_DIR',
    doc: 'Shared POSIX directory for sharedStore fs (mounted at the same path on every node).',
  }),
  exportOnPause: field.boolean({
    default: true,
    env: 'AENV_CLUSTER_EXPORT_ON_PAUSE',
    doc: 'Export every paused sandbox to the shared store so any node can resume it.',
  }),
  syncTemplates: field.boolean({
    default: true,
    env: 'AENV_CLUSTER_SYNC_TEMPLATES',
    doc: 'Export templates built here and import those built elsewhere.',
  }),
  memoryCompression: field.oneOf(['none', 'deflate'], {
    default: 'none',
    env: 'AENV_CLUSTER_MEMORY_COMPRESSION',
    doc: 'Compression of memory files in the shared store (deflate: smaller, slower).',
  }),
};

/** The loaded `cluster` section. */
export type ClusterConfig = ResolvedConfig<typeof clusterConfigSchema>;

/** The section with its defaults resolved and checked. */
export interface ClusterSettings {
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly nodeId: string;
  readonly advertiseUrl: string | undefined;
  readonly apiKey: string | undefined;
  readonly heartbeatMs: number;
  readonly heartbeatTtlSeconds: number;
  readonly sharedStore:
    { readonly kind: 'storage' } | { readonly kind: 'fs'; readonly root: string };
  readonly exportOnPause: boolean;
  readonly syncTemplates: boolean;
  readonly memoryCompression: 'none' | 'deflate';
}

/**
 * The settings of a clustered node, or undefined for a standalone one.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` naming the key.
 */
export function resolveClusterSettings(c: ClusterConfig): ClusterSettings | undefined {
  if (c.redisUrl === undefined || c.redisUrl === '') return undefined;
  const nodeId = c.nodeId ?? hostname();
  if (!/^[a-z0-9][a-z0-9.-]{0,62}$/i.test(nodeId)) {
    throw bad('nodeId', `'${nodeId}' is not a valid node id (letters, digits, '.', '-')`);
  }
  if (c.heartbeatTtlSeconds * 1000 <= c.heartbeatSeconds * 1000) {
    throw bad('heartbeatTtlSeconds', 'must be longer than heartbeatSeconds');
  }
  if (c.sharedStore === 'fs' && c.sharedDir === undefined) {
    throw bad('sharedDir', "a directory is required when sharedStore is 'fs'");
  }
  return {
    redisUrl: c.redisUrl,
    keyPrefix: c.keyPrefix,
    nodeId,
    advertiseUrl: c.advertiseUrl,
    apiKey: c.apiKey,
    heartbeatMs: c.heartbeatSeconds * 1000,
    heartbeatTtlSeconds: c.heartbeatTtlSeconds,
    sharedStore:
      c.sharedStore === 'fs' ? { kind: 'fs', root: c.sharedDir as string } : { kind: 'storage' },
    exportOnPause: c.exportOnPause,
    syncTemplates: c.syncTemplates,
    memoryCompression: c.memoryCompression,
  };
}

function bad(key: string, message: string): AenvError {
  return new AenvError('CONFIG_INVALID_VALUE', `config key 'cluster.${key}': ${message}`, {
    fields: { key: `cluster.${key}` },
  });
}
