/**
 * `serveNode`: everything `aenv server` does to bring a node up on its
 * embedded defaults — clear leftovers of a previous run, prepare the guest
 * artifacts (with progress), pick the VMM driver, start the network slot
 * manager, and start the node over the microVM launcher.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareGuestArtifacts, type ProgressListener } from '@aenv/guest';
import { SlotManager } from '@aenv/network';
import { Cleanup, LOG_FIELDS } from '@aenv/shared';
import { createVmmDriver } from '@aenv/vmm';
import type { NodeConfig } from './config.js';
import { errorFields, type Logger } from './log.js';
import { startNode, type RunningNode } from './node.js';
import { removeLeftoverSandboxes } from './orchestrator/leftover-sandboxes.js';
import { MicroVmLauncher } from './orchestrator/microvm-launcher.js';

/** Options of {@link serveNode}. */
export interface ServeNodeOptions {
  readonly config: NodeConfig;
  readonly logger: Logger;
  /** Progress of the guest artifact preparation (first start takes minutes). */
  readonly onProgress?: ProgressListener;
}

/** Brings a node up on microVMs. */
export async function serveNode(options: ServeNodeOptions): Promise<RunningNode> {
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
  const slots = await SlotManager.start({ config: config.network });
  cleanup.add('close slots', () => slots.close());
  const baseSize = artifacts.baseImage === undefined ? 0 : (await stat(artifacts.baseImage)).size;
  const node = await startNode({
    config,
    logger,
    envdVersion: artifacts.envdVersion,
    templates: [
      {
        id: 'base',
        alias: 'base',
        vcpus: config.sandbox.vcpus,
        memoryMiB: config.sandbox.memoryMiB,
        diskSizeMiB: Math.round(baseSize / 2 ** 20),
      },
    ],
    launcher: new MicroVmLauncher({
      driver,
      slots,
      artifacts,
      sandboxesDir,
      onCleanupError: (err, label) =>
        logger.error('cleanup failed', { step: label, ...errorFields(err) }),
    }),
  });
  cleanup.move();
  return node;
}
