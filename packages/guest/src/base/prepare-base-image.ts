/**
 * Stage `base-image`: the default `base` image, a Debian root filesystem
 * bootstrapped with `debootstrap --variant=minbase` from the host's mirror
 * with bash, coreutils, procps, python3, git, curl, ca-certificates and
 * sudo; a `user` account (uid 1000, home /home/user, passwordless sudo);
 * turned into a sparse ext4 image with `mkfs.ext4 -d`.
 *
 * Inputs: suite, mirror, packages, user, image size, recipe version (a
 * bootstrap is not byte-reproducible, so the key names the recipe, and
 * `artifact.json` records the output's digest). Output: `rootfs.ext4`.
 * Needs root. Takes about a minute; progress follows debootstrap's phases.
 * debootstrap mounts /proc and /sys inside the target; whatever it leaves
 * mounted (it was killed, it failed) is unmounted before the bootstrap
 * directory is removed (`remove-tree.ts`).
 *
 * @module
 */
import { chmod, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { Artifact } from '../artifact-store.js';
import { removeTree } from '../remove-tree.js';
import { runCommand } from '../run-command.js';
import { artifactPath, runStage, type StageContext } from '../stage.js';
import { hostMirror } from './apt-mirror.js';
import { DebootstrapProgress } from './debootstrap-progress.js';

const RECIPE = 1;

/** Packages of the base image besides minbase. */
export const BASE_PACKAGES: readonly string[] = [
  'bash',
  'coreutils',
  'procps',
  'python3',
  'git',
  'curl',
  'ca-certificates',
  'sudo',
];

/** Options of {@link prepareBaseImage}. */
export interface BaseImageOptions {
  /** Debian suite. @default 'bookworm' */
  readonly suite?: string;
  /** Mirror URL. @default the host apt's mirror for the suite */
  readonly mirror?: string;
  /** Packages added to {@link BASE_PACKAGES}. */
  readonly extraPackages?: readonly string[];
  /** Image size in MiB (sparse; grown if the files need more). @default 2048 */
  readonly sizeMiB?: number;
}

/** The base-image stage's result. */
export interface BaseImageArtifact {
  readonly artifact: Artifact;
  readonly image: string;
}

async function configureRootfs(rootfs: string, mirror: string, suite: string): Promise<void> {
  const step = 'base-image: configure';
  await runCommand(
    'chroot',
    [
      rootfs,
      'useradd',
      '--create-home',
      '--uid',
      '1000',
      '--user-group',
      '--shell',
      '/bin/bash',
      '--groups',
      'sudo',
      'user',
    ],
    { step },
  );
  const sudoers = join(rootfs, 'etc/sudoers.d/90-aenv-user');
  await writeFile(sudoers, 'user ALL=(ALL:ALL) NOPASSWD: ALL\n');
  await chmod(sudoers, 0o440);
  await writeFile(join(rootfs, 'etc/hostname'), 'aenv\n');
  await writeFile(
    join(rootfs, 'etc/hosts'),
    '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  );
  await writeFile(join(rootfs, 'etc/apt/sources.list'), `deb ${mirror} ${suite} main\n`);
  // the guest init writes resolv.conf at boot; do not bake the build host's in
  await rm(join(rootfs, 'etc/resolv.conf'), { force: true });
  await runCommand('chroot', [rootfs, 'apt-get', 'clean'], { step });
  await rm(join(rootfs, 'var/lib/apt/lists'), { recursive: true, force: true });
}

async function makeExt4(rootfs: string, out: string, sizeMiB: number): Promise<number> {
  const du = await runCommand('du', ['-s', '--block-size=1M', rootfs], {
    step: 'base-image: size',
  });
  const usedMiB = Number(du.split(/\s/)[0]);
  const size = Math.max(sizeMiB, Math.ceil(usedMiB * 1.25 + 256));
  await runCommand('mkfs.ext4', ['-q', '-F', '-L', 'aenv-base', '-d', rootfs, out, `${size}M`], {
    step: 'base-image: mkfs.ext4',
  });
  return usedMiB;
}

/**
 * Builds the base image (see the module comment).
 * @throws {AenvError} `GUEST_TOOL_MISSING` (debootstrap, e2fsprogs), `GUEST_BUILD_FAILED`.
 */
export async function prepareBaseImage(
  ctx: StageContext,
  options: BaseImageOptions = {},
): Promise<BaseImageArtifact> {
  const suite = options.suite ?? 'bookworm';
  const mirror = options.mirror ?? (await hostMirror(suite));
  const packages = [...BASE_PACKAGES, ...(options.extraPackages ?? [])];
  const sizeMiB = options.sizeMiB ?? 2048;
  const inputs = {
    recipe: RECIPE,
    suite,
    mirror,
    packages,
    sizeMiB,
    user: { name: 'user', uid: 1000 },
  };
  const artifact = await runStage(ctx, 'base-image', inputs, async (work, progress) => {
    if (process.getuid?.() !== 0)
      throw new AenvError('GUEST_BUILD_FAILED', 'base-image: debootstrap needs root');
    const rootfs = join(work, 'rootfs');
    const tracker = new DebootstrapProgress();
    try {
      const args = ['--variant=minbase', `--include=${packages.join(',')}`, suite, rootfs, mirror];
      await runCommand('debootstrap', args, {
        step: 'base-image: debootstrap',
        ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
        onLine: (line) => {
          const update = tracker.line(line);
          if (update !== undefined) progress(update);
        },
      });
      progress({ percent: 90, message: 'adding user, sudo, apt sources' });
      await configureRootfs(rootfs, mirror, suite);
      progress({ percent: 93, message: 'mkfs.ext4' });
      const usedMiB = await makeExt4(rootfs, join(work, 'rootfs.ext4'), sizeMiB);
      return { files: ['rootfs.ext4'], meta: { suite, mirror, packages, usedMiB } };
    } finally {
      await removeTree(rootfs);
    }
  });
  return { artifact, image: artifactPath(artifact, 'rootfs.ext4') };
}
