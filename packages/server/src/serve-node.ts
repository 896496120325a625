/**
 * `serveNode`: everything `aenv server` does to bring a node up on its
 * embedded defaults — clear leftovers of a previous run, prepare the guest
 * artifacts (with progress), pick the VMM driver, start the storage engine
 * (NBD server, chunk cache; the base image imported once as a layer, which
 * becomes the `base` template's disk), start the network slot manager, and
 * start the node over the microVM launcher.
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
import { openNodeState, type NodeState } from './store/node-state.js';
import { LayerGc } from './storage/layer-gc.js';
import { ensureBaseTemplate, type BaseTemplateInputs } from './template/base-template.js';
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
}

/** Brings a node up on microVMs. */
export async function serveNode(options: ServeNodeOptions): Promise<ServedNode> {
  const { config, logger } = options;
  await using cleanup = new Cleanup({
    onLateError: (err) => logger.error('cleanup failed', errorFields(err)),
  });
  const sandboxesDir = join(config.home, 'sandboxes');
  const leftovers = await removeLeftoverSandboxes(sandboxesDir);
  if (leftovers.directories > 0)
    logger.warn('removed leftovers of a previous run', { ...leftovers });
  const artifacts = await prepareGuestArtifacts({
    cacheDir: config.artifacts.dir ?? join(config.home, 'artifacts'),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  const { driver, choice } = await createVmmDriver(config.vmm);
  logger.info('vmm driver', {
    [LOG_FIELDS.vmmDriver]: driver.kind,
    mode: driver.mode,
    why: choice.reason,
  });
  const { storage, baseImage, stopLogging } = await startStorage(
    config,
    artifacts,
    logger,
    cleanup,
  );
  const state = openNodeState(config.home);
  cleanup.add('close node state', () => state.close());
  const slots = await SlotManager.start({ config: config.network });
  cleanup.add('close slots', () => slots.close());
  const launcher = new MicroVmLauncher({
    driver,
    slots,
    artifacts,
    disks: storage,
    sandboxesDir,
    onCleanupError: (err, label) =>
      logger.error('cleanup failed', { step: label, ...errorFields(err) }),
  });
  if (baseImage !== undefined) {
    await ensureBaseTemplate(baseTemplateInputs(config, artifacts, baseImage, driver), {
      launcher,
      templates: state.templates,
      snapshots: state.snapshots,
      envdReadyTimeoutMs: config.sandbox.envdReadyTimeoutMs,
      logger,
    });
  }
  const gc = startLayerGc(config, storage, state, logger);
  cleanup.add('stop layer gc', () => gc?.stop());
  const node = await startNode({
    config,
    logger,
    envdVersion: artifacts.envdVersion,
    state,
    launcher,
    slotLevels: () => {
      const s = slots.stats();
      return { ready: s.ready, building: s.building, in_use: s.inUse, capacity: s.capacity };
    },
  });
  cleanup.move();
  let closing: Promise<void> | undefined;
  return {
    ...node,
    storage,
    gc,
    // The node kills its sandboxes (closing their disks) and closes the
    // launcher (the slots); the storage engine goes last.
    close: () =>
      (closing ??= (async () => {
        try {
          await node.close();
        } finally {
          await storage.close();
          stopLogging();
        }
      })()),
  };
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

/** Starts layer garbage collection (unless configured off), and a first collection. */
function startLayerGc(
  config: NodeConfig,
  storage: NodeStorage,
  state: NodeState,
  logger: Logger,
): LayerGc | undefined {
  if (!config.gc.layers) return undefined;
  const gc = new LayerGc({
    store: createBlobStore(storage.settings.store),
    references: () => new Set([...state.snapshots.layers(), ...storage.openLayers()]),
    recent: () => storage.writtenWithin(config.gc.protectSeconds * 1000),
    onCollected: (deleted) => logger.info('unreferenced layers deleted', { count: deleted.length }),
    onError: (err) => logger.warn('layer collection failed', errorFields(err)),
  });
  state.snapshots.onDelete(() => gc.schedule());
  gc.schedule();
  return gc;
}
