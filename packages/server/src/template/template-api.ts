/**
 * Wires the template and image side of a node for its routes: the build
 * files store, the builder, the template service and cold starts, over the
 * node's launcher, state, orchestrator and image service. A node started
 * without an image service (stand-in launchers in tests) gets none of it.
 *
 * @module
 */
import { join } from 'node:path';
import type { ApiContext } from '../api/api-context.js';
import type { NodeConfig } from '../config.js';
import type { ImageService } from '../image/image-service.js';
import type { Logger } from '../log.js';
import type { SandboxLauncher } from '../orchestrator/launcher.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { NodeState } from '../store/node-state.js';
import { BuildFiles } from './build-files.js';
import { coldStart } from './cold-start.js';
import { TOOLS_NODE, type GuestNode } from './copy-step.js';
import { TemplateBuilder } from './template-builder.js';
import { TemplateService } from './template-service.js';

/** What {@link templateApi} wires. */
export interface TemplateApiDeps {
  readonly config: NodeConfig;
  readonly state: NodeState;
  readonly orchestrator: Orchestrator;
  readonly options: {
    readonly launcher: SandboxLauncher;
    readonly envdVersion: string;
    readonly images?: ImageService | undefined;
    readonly guestNode?: GuestNode | undefined;
  };
  readonly logger: Logger;
}

/** The template fields of the routes' context (none without an image service). */
export function templateApi(
  d: TemplateApiDeps,
): Pick<ApiContext, 'templateService' | 'coldStart' | 'defaultShape'> {
  const { config, state, orchestrator, options, logger } = d;
  const images = options.images;
  const defaultShape = { vcpus: config.sandbox.vcpus, memoryMiB: config.sandbox.memoryMiB };
  if (images === undefined) return { defaultShape };
  const builder = new TemplateBuilder({
    launcher: options.launcher,
    templates: state.templates,
    snapshots: state.snapshots,
    images,
    guestNode: options.guestNode ?? TOOLS_NODE,
    envdVersion: options.envdVersion,
    envdReadyTimeoutMs: config.sandbox.envdReadyTimeoutMs,
    readyTimeoutMs: config.template.readyTimeoutSeconds * 1000,
    stepTimeoutMs: config.template.stepTimeoutSeconds * 1000,
    defaultShape,
    releaseSnapshot: (id) => orchestrator.releaseSnapshot(id),
    logger,
  });
  const templateService = new TemplateService({
    builder,
    templates: state.templates,
    files: new BuildFiles(
      join(config.home, 'template-files'),
      config.template.maxUploadMiB * 2 ** 20,
    ),
    maxConcurrentBuilds: config.template.maxConcurrentBuilds,
    envdVersion: options.envdVersion,
    defaultShape,
    deleteTemplate: (id) => orchestrator.deleteSnapshotOrTemplate(id),
    logger,
  });
  return {
    templateService,
    defaultShape,
    coldStart: (req) =>
      coldStart(
        { images, snapshots: state.snapshots, orchestrator, envdVersion: options.envdVersion },
        req,
      ),
  };
}
