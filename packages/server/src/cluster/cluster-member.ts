/**
 * A node's membership in a cluster: it registers in Redis and heartbeats
 * its report (`NodeReport`, with a TTL: a node that stops is lost), applies
 * the status an operator set (draining), exports paused sandboxes and
 * keeps their bindings (`sandbox-exports.ts`), keeps its templates in line
 * with the cluster's (`template-sync.ts`), and serves the cluster routes
 * the gateway calls (`cluster-routes.ts`).
 *
 * Lifecycle: `join()` (Redis, shared store) before the node starts; the
 * `base` template may then be taken from the cluster (`adoptSharedBase`);
 * `start()` once the node listens; `close()` after the node closed (its
 * shutdown pauses export through the hooks first), which removes the live
 * report so the cluster sees the node gone at once.
 *
 * @module
 */
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import {
  LOG_FIELDS,
  clusterKeys,
  type ClusterKeys,
  type NodeAdmin,
  type NodeStatus,
} from '@aenv/shared';
import { FsBlobStore, type BlobStore } from '@aenv/storage';
import { errorFields, type Logger } from '../log.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { NodeState } from '../store/node-state.js';
import type { ClusterSettings } from './cluster-config.js';
import { clusterRoutes } from './cluster-routes.js';
import type { NodeClusterSeam } from './cluster-seam.js';
import { LocalBases } from './local-bases.js';
import { hostCapacity, nodeReport, type NodeIdentity } from './node-report.js';
import { PrefixedBlobStore } from './prefixed-blob-store.js';
import { connectClusterRedis } from './redis-link.js';
import { SandboxExports } from './sandbox-exports.js';
import { SharedSnapshots } from './shared-snapshots.js';
import { TemplateSync, type SyncResult } from './template-sync.js';

/** What joining needs. */
export interface JoinOptions {
  readonly settings: ClusterSettings;
  readonly home: string;
  readonly state: NodeState;
  /** The node's blob store (the shared store when `sharedStore` is `storage`). */
  readonly blobStore: BlobStore;
  /** Identity, except the URL (known once the node listens). */
  readonly identity: Omit<NodeIdentity, 'url' | 'id'>;
  /** `sandbox.maxSandboxes`. */
  readonly slots: number;
  readonly logger: Logger;
}

/** A clustered node's membership. */
export class ClusterMember {
  readonly nodeId: string;
  readonly keys: ClusterKeys;
  readonly #o: JoinOptions;
  readonly #redis: Redis;
  readonly #shared: SharedSnapshots;
  readonly #exports: SandboxExports;
  readonly #sync: TemplateSync;
  readonly #bases: LocalBases;
  #node: { url: string; orchestrator: Orchestrator } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #status: NodeStatus = 'ready';
  #syncing: Promise<SyncResult> | undefined;
  #closed = false;

  private constructor(o: JoinOptions, redis: Redis) {
    this.#o = o;
    this.#redis = redis;
    this.nodeId = o.settings.nodeId;
    this.keys = clusterKeys(o.settings.keyPrefix);
    this.#bases = new LocalBases(o.state.snapshots);
    const store =
      o.settings.sharedStore.kind === 'fs'
        ? new FsBlobStore(o.settings.sharedStore.root)
        : o.blobStore;
    const snapshotsDir = join(o.home, 'snapshots');
    this.#shared = new SharedSnapshots({
      store: new PrefixedBlobStore(store, 'cluster/'),
      workDir: join(o.home, 'cluster', 'tmp'),
      node: this.nodeId,
      compat: o.identity.compat,
      compression: o.settings.memoryCompression,
      localBase: (id) => this.#bases.find(id),
    });
    const common = { redis, keys: this.keys, shared: this.#shared, snapshots: o.state.snapshots };
    this.#exports = new SandboxExports({
      ...common,
      snapshotsDir,
      nodeId: this.nodeId,
      compat: o.identity.compat,
      exportOnPause: o.settings.exportOnPause,
      logger: o.logger,
    });
    this.#sync = new TemplateSync({
      ...common,
      templates: o.state.templates,
      snapshotsDir,
      nodeId: this.nodeId,
      compat: o.identity.compat,
      syncedFile: join(o.home, 'cluster', 'templates-synced.json'),
      release: (id) => this.#release(id),
      logger: o.logger,
    });
  }

  /**
   * Connects to the cluster's Redis.
   * @throws {AenvError} `CLUSTER_STATE_UNAVAILABLE`.
   */
  static async join(o: JoinOptions): Promise<ClusterMember> {
    const redis = await connectClusterRedis(
      o.settings.redisUrl,
      `node:${o.settings.nodeId}`,
      (err) => o.logger.debug('cluster redis connection', errorFields(err)),
    );
    return new ClusterMember(o, redis);
  }

  /** What `startNode` needs. */
  get seam(): NodeClusterSeam {
    return {
      nodeId: this.nodeId,
      hooks: this.#exports.hooks,
      apiKeys: this.#o.settings.apiKey === undefined ? [] : [this.#o.settings.apiKey],
      routes: (orchestrator) =>
        clusterRoutes({
          orchestrator,
          exports: this.#exports,
          shared: this.#shared,
          snapshots: this.#o.state.snapshots,
          snapshotsDir: join(this.#o.home, 'snapshots'),
          syncTemplates: () => this.syncTemplates(),
        }),
      recovered: async (orchestrator) => {
        const dropped = await this.#exports.dropMoved(orchestrator);
        if (dropped.length > 0) {
          this.#o.logger.info('dropped paused sandboxes another node took over', { ids: dropped });
        }
      },
      status: () => this.#status,
    };
  }

  /**
   * Takes the cluster's `base` template when it was built from the same
   * inputs, or waits while another node builds it (see `TemplateSync`).
   */
  async adoptSharedBase(buildKey: string, waitMs = 10 * 60_000): Promise<boolean> {
    if (!this.#o.settings.syncTemplates) return false;
    return this.#sync.adoptSharedBase(buildKey, waitMs);
  }

  /** Registers the node (first heartbeat) and starts the loop. */
  async start(node: { url: string; orchestrator: Orchestrator }): Promise<void> {
    this.#node = node;
    await this.#beat();
    this.#schedule();
    this.#o.logger.info('joined the cluster', {
      [LOG_FIELDS.nodeId]: this.nodeId,
      url: this.#url(),
    });
  }

  /** One template sync pass (one at a time). */
  async syncTemplates(): Promise<SyncResult> {
    while (this.#syncing !== undefined) await this.#syncing.catch(() => undefined);
    this.#syncing = this.#sync.run();
    try {
      return await this.#syncing;
    } finally {
      this.#syncing = undefined;
    }
  }

  /** Stops heartbeating and removes the live report (the node shows as gone). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#syncing?.catch(() => undefined);
    await this.#exports.settle();
    await this.#redis.del(this.keys.node(this.nodeId)).catch(() => undefined);
    this.#redis.disconnect();
  }

  #url(): string {
    return this.#o.settings.advertiseUrl ?? this.#node?.url ?? '';
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.#tick();
    }, this.#o.settings.heartbeatMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    try {
      await this.#beat();
    } catch (err) {
      this.#o.logger.warn('cluster heartbeat failed', errorFields(err));
    }
    if (this.#o.settings.syncTemplates && this.#syncing === undefined && !this.#closed) {
      this.syncTemplates().catch((err: unknown) =>
        this.#o.logger.warn('template sync failed', errorFields(err)),
      );
    }
    this.#schedule();
  }

  async #beat(): Promise<void> {
    const node = this.#node;
    if (node === undefined || this.#closed) return;
    const admin = await this.#redis.get(this.keys.nodeAdmin(this.nodeId));
    const status = admin === null ? 'ready' : (JSON.parse(admin) as NodeAdmin).status;
    if (status !== this.#status) {
      this.#o.logger.info('node status changed', { [LOG_FIELDS.nodeId]: this.nodeId, status });
      this.#status = status;
    }
    const report = nodeReport({
      identity: { ...this.#o.identity, id: this.nodeId, url: () => this.#url() },
      orchestrator: node.orchestrator,
      templates: this.#o.state.templates,
      host: await hostCapacity(this.#o.home),
      slots: this.#o.slots,
      status,
      memoryBases: await this.#bases.list(),
    });
    const text = JSON.stringify(report);
    await this.#redis
      .multi()
      .sadd(this.keys.nodes, this.nodeId)
      .set(this.keys.node(this.nodeId), text, 'EX', this.#o.settings.heartbeatTtlSeconds)
      .set(this.keys.nodeLast(this.nodeId), text)
      .exec();
  }

  async #release(snapshotId: string): Promise<void> {
    const o = this.#node?.orchestrator;
    if (o !== undefined) return o.releaseSnapshot(snapshotId);
    await this.#o.state.snapshots.release(snapshotId, (id) =>
      this.#o.state.templates.usesSnapshot(id),
    );
  }
}
