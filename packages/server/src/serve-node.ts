/**
 * `serveNode`: everything `aenv server` does to bring a node up on its
 * embedded defaults — clear leftovers of a previous run, prepare the guest
 * artifacts (with progress), pick the VMM driver, start the storage engine
 * (NBD server, chunk cache; the base image imported once as a layer, which
 * becomes the `base` template's disk), start the network slot manager, and
 * start the node over the microVM launcher, with a pool of prepared
 * restores of the configured templates (`pool`).
 *
 * @module
 */
import { join } from 'node:path';
import { prepareGuestArtifacts, type GuestArtifacts, type ProgressListener } from '@aenv/guest';
import { SlotManager } from '@aenv/network';
import { Cleanup, LOG_FIELDS } from '@aenv/shared';
import { createBlobStore, resolveStorageSettings, type ImageSpec } from '@aenv/storage';
import { createVmmDriver, type VmmDriver } from '@aenv/vmm';
import type { NodeConfig } from './config.js';
import { errorFields, type Logger } from './log.js';
import { startNode, type RunningNode } from './node.js';
import { removeLeftoverSandboxes } from './orchestrator/leftover-sandboxes.js';
import { MicroVmLauncher } from './orchestrator/microvm-launcher.js';
import type { PooledMachineDeps } from './orchestrator/pooled-machine.js';
import { RestorePool } from './orchestrator/restore-pool.js';
import { openNodeState, type NodeState } from './store/node-state.js';
import { LayerGc } from './storage/layer-gc.js';
import {
  baseTemplateKey,
  ensureBaseTemplate,
  type BaseTemplateInputs,
} from './template/base-template.js';
import type { ClusterMember } from './cluster/cluster-member.js';
import { joinCluster, nodeCompat } from './cluster/join-cluster.js';
import { ImageService } from './image/image-service.js';
import { TOOLS_NODE } from './template/copy-step.js';
import { NodeStorage } from './storage/node-storage.js';
import { logStorageEvents } from './storage/storage-log.js';

/** Options of {@link serveNode}. */
export interface ServeNodeOptions {
  readonly config: NodeConfig;
  readonly logger: Logger;
  /** Progress of the guest artifact preparation (first start takes minutes). */
  readonly onProgress?: ProgressListener;
}

/** A node on microVMs, with its storage engine. */
export interface ServedNode extends RunningNode {
  /** The storage engine: template images, sandbox disks (seal), NBD and cache counters. */
  readonly storage: NodeStorage;
  /** Layer garbage collection, when on. */
  readonly gc: LayerGc | undefined;
  /** OCI images: pulls, conversions, their layers. */
  readonly images: ImageService;
  /** Prepared restores of the configured templates (levels, reconcile). */
  readonly pool: RestorePool;
  /** Cluster membership, when `cluster.redisUrl` is set. */
  readonly cluster: ClusterMember | undefined;
}

/** Brings a node up on microVMs. */
export async function serveNode(options: ServeNodeOptions): Promise<ServedNode> {
  const { config, logger } = options;
  await using cleanup = new Cleanup({
    onLateError: (err) => logger.error('cleanup failed', errorFields(err)),
  });
  const { sandboxesDir, artifacts, driver } = await prepareHost(options);
  const { storage, baseImage, stopLogging } = await startStorage(
    config,
    artifacts,
    logger,
    cleanup,
  );
  const state = openNodeState(config.home);
  cleanup.add('close node state', () => state.close());
  const images = await startImages(config, storage, logger);
  const cluster = await joinCluster(config, { state, storage, artifacts, driver, logger });
  cleanup.add('leave the cluster', () => cluster?.close());
  const slots = await SlotManager.start({ config: config.network });
  cleanup.add('close slots', () => slots.close());
  const machines = { driver, slots, disks: storage, artifacts, sandboxesDir };
  const { launcher, pool } = microVmLauncher(config, state, machines, logger);
  cleanup.add('close restore pool', () => pool.close());
  if (baseImage !== undefined) {
    await baseTemplate(config, baseTemplateInputs(config, artifacts, baseImage, driver), {
      launcher,
      state,
      logger,
      cluster,
    });
  }
  pool.start();
  const gc = cluster ? undefined : startLayerGc(config, storage, state, logger, images);
  cleanup.add('stop layer gc', () => gc?.stop());
  const node = await startNode({
    config,
    logger,
    envdVersion: artifacts.envdVersion,
    state,
    launcher,
    images,
    guestNode: TOOLS_NODE,
    cluster: cluster?.seam,
    machine: { driver: driver.kind, mode: driver.mode, compat: nodeCompat(artifacts, driver) },
    slotLevels: () => {
      const s = slots.stats();
      return { ready: s.ready, building: s.building, in_use: s.inUse, capacity: s.capacity };
    },
  });
  await cluster?.start({ url: node.url, orchestrator: node.orchestrator });
  cleanup.move();
  let closing: Promise<void> | undefined;
  return {
    ...node,
    storage,
    gc,
    pool,
    images,
    cluster,
    // The node kills its sandboxes (closing their disks) and closes the
    // launcher (the slots); the storage engine goes last.
    close: () =>
      (closing ??= (async () => {
        try {
          await gc?.stop(); // before the node state it reads is closed
          await node.close();
          await cluster?.close();
        } finally {
          await storage.close();
          stopLogging();
        }
      })()),
  };
}

/**
 * Prepares what machines need on this host: removes sandbox directories a
 * previous run left, fetches or builds the guest artifacts, picks the driver.
 */
async function prepareHost(
  options: ServeNodeOptions,
): Promise<{ sandboxesDir: string; artifacts: GuestArtifacts; driver: VmmDriver }> {
  const { config, logger } = options;
  const sandboxesDir = join(config.home, 'sandboxes');
  const leftovers = await removeLeftoverSandboxes(sandboxesDir);
  if (leftovers.directories > 0)
    logger.warn('removed leftovers of a previous run', { ...leftovers });
  const artifacts = await prepareGuestArtifacts({
    cacheDir: config.artifacts.dir ?? join(config.home, 'artifacts'),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  const { driver, choice } = await createVmmDriver(config.vmm, { home: config.home });
  logger.info('vmm driver', {
    [LOG_FIELDS.vmmDriver]: driver.kind,
    mode: driver.mode,
    why: choice.reason,
  });
  return { sandboxesDir, artifacts, driver };
}

/**
 * Starts the storage engine and makes the base image (imported as a layer
 * the first time) the disk of the `base` template.
 */
async function startStorage(
  config: NodeConfig,
  artifacts: GuestArtifacts,
  logger: Logger,
  cleanup: Cleanup,
): Promise<{ storage: NodeStorage; baseImage: ImageSpec | undefined; stopLogging: () => void }> {
  const settings = resolveStorageSettings(config.storage, config.home);
  const stopLogging = logStorageEvents(logger);
  cleanup.add('stop storage logs', stopLogging);
  const storage = await NodeStorage.start({ home: config.home, settings });
  cleanup.add('close storage', () => storage.close());
  if (artifacts.baseImage === undefined) return { storage, baseImage: undefined, stopLogging };
  logger.info('base image: looking up its layer', { store: settings.store.kind });
  const base = await storage.importBaseImage(artifacts.baseImage, artifacts.digests.baseImage);
  logger.info(base.imported ? 'base image imported as a layer' : 'base image layer found', {
    [LOG_FIELDS.layerDigest]: base.image.layers[0],
    [LOG_FIELDS.durationMs]: Math.round(base.durationMs),
  });
  return { storage, baseImage: base.image, stopLogging };
}

/**
 * Makes sure the `base` template exists: taken from the cluster when a
 * clustered node's peers built it from the same inputs, else built here.
 */
async function baseTemplate(
  config: NodeConfig,
  inputs: BaseTemplateInputs,
  d: { launcher: MicroVmLauncher; state: NodeState; logger: Logger; cluster?: ClusterMember },
): Promise<void> {
  await d.cluster?.adoptSharedBase(baseTemplateKey(inputs));
  await ensureBaseTemplate(inputs, {
    launcher: d.launcher,
    templates: d.state.templates,
    snapshots: d.state.snapshots,
    envdReadyTimeoutMs: config.sandbox.envdReadyTimeoutMs,
    logger: d.logger,
  });
}

/** What the base template is built from: the base image, machine shape and what it ran on. */
function baseTemplateInputs(
  config: NodeConfig,
  artifacts: GuestArtifacts,
  image: ImageSpec,
  driver: VmmDriver,
): BaseTemplateInputs {
  return {
    image,
    vcpus: config.sandbox.vcpus,
    memoryMiB: config.sandbox.memoryMiB,
    diskSizeMiB: Math.round(image.virtualSize / 2 ** 20),
    envdVersion: artifacts.envdVersion,
    identity: {
      kernel: artifacts.digests.kernel,
      initrd: artifacts.digests.initrd,
      tools: artifacts.digests.toolsImage,
      driver: driver.kind,
      mode: driver.mode,
    },
  };
}

/**
 * The microVM launcher with its pool of prepared restores of the configured
 * templates (`pool` config); `start()` the pool once the templates exist.
 */
function microVmLauncher(
  config: NodeConfig,
  state: NodeState,
  machines: PooledMachineDeps,
  logger: Logger,
): { launcher: MicroVmLauncher; pool: RestorePool } {
  const capable = machines.driver.capabilities.has('prepared-restore');
  if (!capable) logger.info('restore pool off: the VMM driver cannot prepare restores');
  const pool = new RestorePool({
    config: capable ? config.pool : { ...config.pool, low: 0 },
    machines,
    resolve: (template) => {
      const t = state.templates.find(template);
      const s = t === undefined ? undefined : state.snapshots.find(t.snapshotId);
      return s?.dir === undefined ? undefined : { dir: s.dir, image: s.image };
    },
    onError: (err, template) =>
      logger.warn('preparing a pooled restore failed', {
        [LOG_FIELDS.templateId]: template,
        ...errorFields(err),
      }),
    onDrained: (template, dir) =>
      logger.info('template changed: its prepared restores were drained', {
        [LOG_FIELDS.templateId]: template,
        dir,
      }),
  });
  const launcher = new MicroVmLauncher({
    ...machines,
    pool,
    onCleanupError: (err, label) =>
      logger.error('cleanup failed', { step: label, ...errorFields(err) }),
    onPoolError: (err) =>
      logger.warn(
        'a prepared restore failed to start; restored the ordinary way',
        errorFields(err),
      ),
  });
  return { launcher, pool };
}

/** Starts layer garbage collection (unless configured off), and a first collection. */
function startLayerGc(
  config: NodeConfig,
  storage: NodeStorage,
  state: NodeState,
  logger: Logger,
  images: ImageService,
): LayerGc | undefined {
  if (!config.gc.layers) return undefined;
  const gc = new LayerGc({
    store: createBlobStore(storage.settings.store),
    references: () =>
      new Set([...state.snapshots.layers(), ...storage.openLayers(), ...images.layers()]),
    recent: () => storage.writtenWithin(config.gc.protectSeconds * 1000),
    onCollected: (deleted) => logger.info('unreferenced layers deleted', { count: deleted.length }),
    onError: (err) => logger.warn('layer collection failed', errorFields(err)),
  });
  state.snapshots.onDelete(() => gc.schedule());
  gc.schedule();
  return gc;
}

/**
 * Starts the image service on the node's blob store: removes what killed
 * conversions left (mounts, loop devices, files) first.
 */
async function startImages(
  config: NodeConfig,
  storage: NodeStorage,
  logger: Logger,
): Promise<ImageService> {
  const images = await ImageService.start({
    settings: config.image,
    store: createBlobStore(storage.settings.store),
    home: config.home,
  });
  const { mounts, loopDevices } = images.leftovers;
  if (mounts + loopDevices > 0) {
    logger.warn('removed leftovers of interrupted image conversions', { mounts, loopDevices });
  }
  return images;
}
