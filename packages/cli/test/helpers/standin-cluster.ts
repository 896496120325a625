/**
 * A cluster of real nodes on {@link EnvdStandInLauncher} stand-in machines
 * (the real envd as a host process instead of a microVM), for fast
 * cluster suites: a real `redis-server`, `n` real nodes (API, proxy,
 * orchestrator, SQLite, cluster membership) on loopback ports, a shared
 * directory as the shared store, and the real gateway and scheduler
 * in-process. Each node seeds its own `base` template (same build key), as
 * nodes that built theirs before joining would have.
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createLogger as controlLogger,
  loadControlPlaneConfig,
  runGateway,
  runScheduler,
  silentLogger as controlSilent,
  type RunningGateway,
  type RunningScheduler,
} from '@aenv/control-plane';
import { startRedisServer, type TestRedis } from '@aenv/control-plane/testing';
import {
  ClusterMember,
  loadNodeConfig,
  openNodeState,
  resolveClusterSettings,
  silentLogger,
  startNode,
  type ClusterSettings,
  type NodeState,
  type RunningNode,
} from '@aenv/server';
import { newApiKey } from '@aenv/shared';
import { FsBlobStore } from '@aenv/storage';
import { EnvdStandInLauncher } from './envd-standin-launcher.js';

/** One node of the cluster. */
export interface ClusterNodeHandle {
  readonly id: string;
  node: RunningNode;
  member: ClusterMember;
  state: NodeState;
  readonly home: string;
  up: boolean;
}

/** A stand-in cluster. */
export interface StandInCluster {
  readonly redis: TestRedis;
  readonly key: string;
  readonly nodes: ClusterNodeHandle[];
  gateway: RunningGateway;
  scheduler: RunningScheduler;
  /** e2b SDK options pointing at the gateway. */
  sdk(): { apiKey: string; apiUrl: string; sandboxUrl: string };
  /** Stops node `i` without pausing (a crash: no heartbeat, no API). */
  crashNode(i: number): Promise<void>;
  /** Starts node `i` again on its home. */
  restartNode(i: number): Promise<void>;
  /** Replaces the gateway and the scheduler with fresh ones. */
  restartControlPlane(): Promise<void>;
  /** Starts another gateway replica on the same Redis (the caller closes it). */
  startGatewayReplica(): Promise<RunningGateway>;
  close(): Promise<void>;
}

function seedBase(state: NodeState): void {
  if (state.templates.find('base') !== undefined) return;
  const { id, dir } = state.snapshots.allocate();
  mkdirSync(dir, { recursive: true });
  const createdAt = new Date().toISOString();
  state.snapshots.add({
    id,
    kind: 'template',
    templateId: 'base',
    dir,
    image: { virtualSize: 2 ** 31, layers: [`sha256:${'b'.repeat(64)}`] },
    vcpus: 1,
    memoryMiB: 256,
    diskSizeMiB: 1024,
    envdVersion: '0.5.7',
    createdAt,
  });
  state.templates.put({
    id: 'base',
    alias: 'base',
    snapshotId: id,
    vcpus: 1,
    memoryMiB: 256,
    diskSizeMiB: 1024,
    buildKey: 'standin',
    createdAt,
  });
}

function settingsOf(redisUrl: string, id: string, shared: string, key: string): ClusterSettings {
  const s = resolveClusterSettings({
    redisUrl,
    keyPrefix: 'aenv:',
    nodeId: id,
    advertiseUrl: undefined,
    apiKey: key,
    heartbeatSeconds: 1,
    heartbeatTtlSeconds: 3,
    sharedStore: 'fs',
    sharedDir: shared,
    exportOnPause: true,
    syncTemplates: true,
    memoryCompression: 'none',
  });
  if (s === undefined) throw new Error('cluster settings');
  return s;
}

async function bootNode(
  root: string,
  redisUrl: string,
  key: string,
  i: number,
): Promise<ClusterNodeHandle> {
  const id = `node-${i}`;
  const home = join(root, id);
  const config = loadNodeConfig(undefined, {
    AENV_HOME: home,
    AENV_PORT: '0',
    AENV_MAX_SANDBOXES: '8',
    AENV_PAUSE_ON_SHUTDOWN: 'false',
  });
  const state = openNodeState(config.home);
  seedBase(state);
  const member = await ClusterMember.join({
    settings: settingsOf(redisUrl, id, join(root, 'shared'), key),
    home: config.home,
    state,
    blobStore: new FsBlobStore(join(root, 'shared')),
    identity: {
      version: '0.1.0',
      driver: 'standin',
      mode: 'none',
      compat: 'standin',
      startedAt: new Date().toISOString(),
    },
    slots: 8,
    logger: silentLogger,
  });
  const node = await startNode({
    config,
    launcher: new EnvdStandInLauncher(join(root, `${id}-machines`), config.home),
    state,
    envdVersion: '0.5.7',
    logger: silentLogger,
    cluster: member.seam,
  });
  await member.start({ url: node.url, orchestrator: node.orchestrator });
  return { id, node, member, state, home, up: true };
}

function controlPlaneConfig(redisUrl: string, key: string) {
  return loadControlPlaneConfig(undefined, {
    AENV_CLUSTER_REDIS_URL: redisUrl,
    AENV_CLUSTER_API_KEY: key,
    AENV_GATEWAY_API_KEYS: `${key},acme=e2b_${'a'.repeat(40)}`,
    AENV_GATEWAY_PORT: '0',
    AENV_SCHEDULER_INTERVAL_SECONDS: '1',
    AENV_TENANT_LIMITS: 'acme=2',
  });
}

const logger = process.env.AENV_TEST_LOG_LEVEL === 'debug' ? controlLogger('debug') : controlSilent;

async function controlPlane(redisUrl: string, key: string) {
  const config = controlPlaneConfig(redisUrl, key);
  const gateway = await runGateway(config, logger);
  const scheduler = await runScheduler(config, logger);
  return { gateway, scheduler };
}

/** Starts a stand-in cluster of `n` nodes. */
export async function startStandInCluster(n: number): Promise<StandInCluster> {
  const root = mkdtempSync(join(tmpdir(), 'aenv-cluster-'));
  const redis = await startRedisServer();
  const key = newApiKey();
  const nodes: ClusterNodeHandle[] = [];
  for (let i = 1; i <= n; i++) nodes.push(await bootNode(root, redis.url, key, i));
  let cp = await controlPlane(redis.url, key);
  const cluster: StandInCluster = {
    redis,
    key,
    nodes,
    gateway: cp.gateway,
    scheduler: cp.scheduler,
    sdk: () => ({ apiKey: key, apiUrl: cluster.gateway.url, sandboxUrl: cluster.gateway.url }),
    crashNode: async (i) => {
      const h = nodes[i - 1] as ClusterNodeHandle;
      await h.node.close();
      await h.member.close();
      h.up = false;
    },
    restartNode: async (i) => {
      const h = nodes[i - 1] as ClusterNodeHandle;
      const fresh = await bootNode(root, redis.url, key, i);
      Object.assign(h, { node: fresh.node, member: fresh.member, state: fresh.state, up: true });
    },
    restartControlPlane: async () => {
      await cluster.gateway.close();
      await cluster.scheduler.close();
      cp = await controlPlane(redis.url, key);
      cluster.gateway = cp.gateway;
      cluster.scheduler = cp.scheduler;
    },
    startGatewayReplica: () => runGateway(controlPlaneConfig(redis.url, key), logger),
    close: async () => {
      await cluster.gateway.close();
      await cluster.scheduler.close();
      for (const h of nodes) {
        if (!h.up) continue;
        await h.node.close();
        await h.member.close();
      }
      await redis.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return cluster;
}
