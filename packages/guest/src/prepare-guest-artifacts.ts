/**
 * `prepareGuestArtifacts`: everything a VM needs to boot an aenv guest,
 * built on first use with visible progress, cached under `cacheDir`
 * (content-addressed, see `artifact-store.ts`), rebuilt only when an input
 * changes: kernel → initramfs → init → node runtime → tools image → base
 * image. A second call with unchanged inputs only checks the cache (a few
 * `apt-cache`/`ldd` calls and file stats).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import { ArtifactStore } from './artifact-store.js';
import { prepareBaseImage, type BaseImageOptions } from './base/prepare-base-image.js';
import { ENVD_PORT, GUEST_DRIVE_IDS } from './guest-contract.js';
import { prepareInit } from './init/prepare-init.js';
import { prepareInitramfs } from './initramfs/prepare-initramfs.js';
import { prepareKernel } from './kernel/prepare-kernel.js';
import type { ProgressListener } from './progress.js';
import type { StageContext } from './stage.js';
import type { EnvdBundle } from './tools/envd-bundle.js';
import { prepareNodeRuntime } from './tools/node-runtime.js';
import { prepareToolsImage } from './tools/prepare-tools-image.js';

/** Options of {@link prepareGuestArtifacts}. */
export interface PrepareGuestArtifactsOptions {
  /** Cache root (the daemon uses `$AENV_HOME/artifacts`). */
  readonly cacheDir: string;
  /** Receives progress events. */
  readonly onProgress?: ProgressListener;
  readonly signal?: AbortSignal;
  /** The envd bundle to package. @default `@aenv/envd`'s ENVD_BUNDLE_DIR and ENVD_VERSION */
  readonly envd?: EnvdBundle;
  /** Kernel metapackage or versioned package. @default 'linux-image-cloud-amd64' */
  readonly kernelPackage?: string;
  /** Run `apt-get update` once when the kernel package cannot be resolved. @default true */
  readonly aptUpdate?: boolean;
  /** Base image options, or `false` to skip the base image. */
  readonly baseImage?: BaseImageOptions | false;
  /** The node binary to package. @default process.execPath */
  readonly nodeBinary?: string;
  /** Static busybox for the initramfs. @default '/bin/busybox' */
  readonly busybox?: string;
}

/** Paths and facts of a prepared guest. */
export interface GuestArtifacts {
  /** Uncompressed PVH kernel (`VmSpec.kernel`). */
  readonly kernel: string;
  /** Initramfs (`VmSpec.initrd`). */
  readonly initrd: string;
  /** Read-only tools image: attach as drive `tools`, read-only. */
  readonly toolsImage: string;
  /** The `base` image (ext4), or undefined when skipped: the source of drive `rootfs`. */
  readonly baseImage: string | undefined;
  readonly kernelRelease: string;
  readonly kernelPackage: { readonly name: string; readonly version: string };
  readonly envdVersion: string;
  readonly nodeVersion: string;
  /** `sha256:` digests of the files above. */
  readonly digests: {
    readonly kernel: string;
    readonly initrd: string;
    readonly toolsImage: string;
    readonly baseImage: string | undefined;
  };
  /** Drive ids the guest init expects. */
  readonly driveIds: typeof GUEST_DRIVE_IDS;
  /** Port envd listens on in the guest. */
  readonly envdPort: number;
}

/**
 * The envd bundle of `@aenv/envd`, imported lazily: the daemon loads the
 * guest package without pulling envd's server code into its own process.
 * @throws {AenvError} `GUEST_ENVD_BUNDLE_INVALID` when it cannot be loaded.
 */
export async function defaultEnvdBundle(): Promise<EnvdBundle> {
  try {
    const envd = await import('@aenv/envd');
    return { dir: envd.ENVD_BUNDLE_DIR, version: envd.ENVD_VERSION };
  } catch (err) {
    throw new AenvError(
      'GUEST_ENVD_BUNDLE_INVALID',
      `cannot load @aenv/envd: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

function digest(files: Readonly<Record<string, { sha256: string }>>, name: string): string {
  return files[name]?.sha256 ?? '';
}

/**
 * Prepares (or finds in the cache) every guest artifact.
 * @throws {AenvError} `GUEST_KERNEL_UNAVAILABLE`, `GUEST_TOOL_MISSING`,
 *   `GUEST_BUILD_FAILED`, `GUEST_ENVD_BUNDLE_INVALID`, `GUEST_CACHE_BUSY`.
 */
export async function prepareGuestArtifacts(
  options: PrepareGuestArtifactsOptions,
): Promise<GuestArtifacts> {
  const ctx: StageContext = {
    store: new ArtifactStore(options.cacheDir),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const envd = options.envd ?? (await defaultEnvdBundle());
  const kernel = await prepareKernel(ctx, {
    ...(options.kernelPackage === undefined ? {} : { kernelPackage: options.kernelPackage }),
    ...(options.aptUpdate === undefined ? {} : { aptUpdate: options.aptUpdate }),
  });
  const initramfs = await prepareInitramfs(ctx, kernel, options.busybox);
  const init = await prepareInit(ctx);
  const node = await prepareNodeRuntime(ctx, options.nodeBinary);
  const tools = await prepareToolsImage(ctx, init, node, envd);
  const base =
    options.baseImage === false ? undefined : await prepareBaseImage(ctx, options.baseImage ?? {});
  return {
    kernel: kernel.vmlinux,
    initrd: initramfs.initrd,
    toolsImage: tools.image,
    baseImage: base?.image,
    kernelRelease: kernel.release,
    kernelPackage: { name: kernel.package.name, version: kernel.package.version },
    envdVersion: tools.envdVersion,
    nodeVersion: tools.nodeVersion,
    digests: {
      kernel: digest(kernel.artifact.files, 'vmlinux'),
      initrd: digest(initramfs.artifact.files, 'initrd.cpio'),
      toolsImage: digest(tools.artifact.files, 'tools.erofs'),
      baseImage: base === undefined ? undefined : digest(base.artifact.files, 'rootfs.ext4'),
    },
    driveIds: GUEST_DRIVE_IDS,
    envdPort: ENVD_PORT,
  };
}
