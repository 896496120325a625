/**
 * `@aenv/guest`: the guest side of an aenv VM: the kernel, the initramfs
 * and init, the read-only tools image (node runtime + envd + init) and the
 * default `base` image, built on demand into a content-addressed cache.
 *
 * Start with {@link prepareGuestArtifacts}; the stage functions are exported
 * for tools and tests that need only part of it.
 *
 * @module
 */
export {
  defaultEnvdBundle,
  prepareGuestArtifacts,
  type GuestArtifacts,
  type PrepareGuestArtifactsOptions,
} from './prepare-guest-artifacts.js';
export {
  ENVD_PORT,
  GUEST_DRIVE_IDS,
  GUEST_KERNEL_PARAMS,
  INIT_STARTED_MARKER,
  TOOLS_LAYOUT,
  TOOLS_MOUNT,
} from './guest-contract.js';
export {
  GUEST_STAGES,
  formatProgress,
  type GuestProgressEvent,
  type GuestStage,
  type ProgressListener,
} from './progress.js';
export { ArtifactStore, type Artifact, type ArtifactFile } from './artifact-store.js';
export type { StageContext } from './stage.js';
export { prepareKernel, type KernelArtifact, type KernelOptions } from './kernel/prepare-kernel.js';
export { prepareInitramfs, type InitramfsArtifact } from './initramfs/prepare-initramfs.js';
export { prepareInit, type InitArtifact } from './init/prepare-init.js';
export { prepareNodeRuntime, type NodeRuntimeArtifact } from './tools/node-runtime.js';
export { prepareToolsImage, type ToolsImageArtifact } from './tools/prepare-tools-image.js';
export type { EnvdBundle } from './tools/envd-bundle.js';
export {
  BASE_PACKAGES,
  prepareBaseImage,
  type BaseImageArtifact,
  type BaseImageOptions,
} from './base/prepare-base-image.js';
