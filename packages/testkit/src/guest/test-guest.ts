/**
 * The guest artifacts VM suites boot (kernel, initramfs, tools image with
 * the real envd, base image), from the guest package, cached across runs
 * in `$AENV_TEST_CACHE` (default `/var/tmp/aenv-test-cache`; a cold cache
 * builds them first, minutes), and the checks of whether this host can run
 * VM suites at all.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { prepareGuestArtifacts, type GuestArtifacts } from '@aenv/guest';

const exec = promisify(execFile);

/** The artifact cache VM suites share. */
export const TEST_CACHE = process.env.AENV_TEST_CACHE ?? '/var/tmp/aenv-test-cache';

/** Guest artifacts that include a base image. */
export type TestGuestArtifacts = GuestArtifacts & { readonly baseImage: string };

/**
 * Prepares (or finds in the cache) the guest artifacts.
 * @returns the artifacts, or why they cannot be had here
 */
export async function testGuestArtifacts(
  cacheDir = TEST_CACHE,
): Promise<TestGuestArtifacts | string> {
  try {
    const a = await prepareGuestArtifacts({ cacheDir });
    if (a.baseImage === undefined) return 'the guest artifacts have no base image';
    return { ...a, baseImage: a.baseImage };
  } catch (err) {
    return `guest artifacts unavailable: ${(err as Error).message}`;
  }
}

/** Why this host cannot run qemu VM suites (root, the tools), or undefined when it can. */
export async function qemuVmSkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, taps)';
  for (const [tool, arg] of [
    ['qemu-system-x86_64', '--version'],
    ['qemu-img', '--version'],
    ['ip', '-V'],
    ['nsenter', '--version'],
  ] as const) {
    try {
      await exec(tool, [arg]);
    } catch {
      return `needs ${tool} (scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}
