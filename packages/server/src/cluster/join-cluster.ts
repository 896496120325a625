/**
 * Joining a cluster from the node's configuration (`serveNode`): the
 * `cluster` section resolved, the snapshot compat key from the VMM driver
 * and guest artifacts, the shared store, and the Redis connection.
 * Standalone nodes (no `cluster.redisUrl`) get `undefined`.
 *
 * @module
 */
import type { GuestArtifacts } from '@aenv/guest';
import { createBlobStore, type StorageSettings } from '@aenv/storage';
import type { VmmDriver } from '@aenv/vmm';
import { NODE_API_VERSION } from '../api/openapi/openapi-document.js';
import type { NodeConfig } from '../config.js';
import type { Logger } from '../log.js';
import type { NodeState } from '../store/node-state.js';
import { resolveClusterSettings } from './cluster-config.js';
import { ClusterMember } from './cluster-member.js';
import { compatKey } from './node-report.js';

/** What joining takes from the node being served. */
export interface JoinDeps {
  readonly state: NodeState;
  /** The storage engine (its blob store is shared with the cluster). */
  readonly storage: { readonly settings: StorageSettings };
  readonly artifacts: GuestArtifacts;
  readonly driver: VmmDriver;
  readonly logger: Logger;
}

/** The snapshot compat key of this node (see `compatKey`). */
export function nodeCompat(artifacts: GuestArtifacts, driver: VmmDriver): string {
  return compatKey({
    driver: driver.kind,
    mode: driver.mode,
    kernel: artifacts.kernel,
    kernelDigest: artifacts.digests.kernel,
    initrd: artifacts.initrd,
    initrdDigest: artifacts.digests.initrd,
    toolsDigest: artifacts.digests.toolsImage,
  });
}

/**
 * Joins the configured cluster, or returns undefined for a standalone node.
 * @throws {AenvError} `CONFIG_INVALID_VALUE`, `CLUSTER_STATE_UNAVAILABLE`.
 */
export async function joinCluster(
  config: NodeConfig,
  d: JoinDeps,
): Promise<ClusterMember | undefined> {
  const settings = resolveClusterSettings(config.cluster);
  if (settings === undefined) return undefined;
  const store = d.storage.settings.store;
  if (settings.sharedStore.kind === 'storage' && store.kind === 'fs') {
    d.logger.warn(
      'cluster: snapshots move through the fs blob store; every node must share its root',
      {
        root: store.root,
      },
    );
  }
  if (config.gc.layers) {
    d.logger.info('cluster: layer garbage collection is off (nodes share the blob store)');
  }
  return ClusterMember.join({
    settings,
    home: config.home,
    state: d.state,
    blobStore: createBlobStore(store),
    identity: {
      version: NODE_API_VERSION,
      driver: d.driver.kind,
      mode: d.driver.mode,
      compat: nodeCompat(d.artifacts, d.driver),
      startedAt: new Date().toISOString(),
    },
    slots: config.sandbox.maxSandboxes,
    logger: d.logger,
  });
}
