/**
 * Getting Debian's cloud kernel without installing it as the host's kernel:
 * resolve the versioned package the `linux-image-cloud-amd64` metapackage
 * depends on (apt-cache), download it (apt-get download, into a work
 * directory), unpack it (dpkg-deb -x). The host's apt configuration decides
 * the mirror; its package lists must be current (`apt-get update`).
 *
 * @module
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import { runCommand } from '../run-command.js';
import type { StageProgress } from '../progress.js';

/** The metapackage that tracks Debian's current cloud kernel. */
export const DEFAULT_KERNEL_PACKAGE = 'linux-image-cloud-amd64';

/** A resolved kernel package. */
export interface KernelPackage {
  readonly name: string;
  readonly version: string;
  /** `SHA256` from the package index: the download's identity. */
  readonly sha256: string;
  readonly size: number;
}

/** The versioned kernel package a metapackage depends on (`apt-cache depends` output). */
export function parseKernelDependency(dependsOutput: string): string | undefined {
  const m = /^\s*\|?Depends:\s*(linux-image-\d[^\s<>]*)\s*$/m.exec(dependsOutput);
  return m?.[1];
}

/** Fields of the first stanza of `apt-cache show` output. */
export function parseAptShow(output: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of output.split('\n')) {
    if (line.trim() === '') break;
    const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    if (m !== null) fields[m[1] as string] = m[2] as string;
  }
  return fields;
}

function unavailable(message: string, cause?: unknown): AenvError {
  return new AenvError('GUEST_KERNEL_UNAVAILABLE', `${message} (is apt-get update current?)`, {
    cause,
  });
}

/**
 * Resolves `pkg` (a metapackage or an already versioned package).
 * @throws {AenvError} `GUEST_KERNEL_UNAVAILABLE`.
 */
export async function resolveKernelPackage(pkg = DEFAULT_KERNEL_PACKAGE): Promise<KernelPackage> {
  const step = 'kernel: resolve package';
  let name = pkg;
  if (!/^linux-image-\d/.test(pkg)) {
    const out = await runCommand('apt-cache', ['depends', pkg], { step }).catch((err: unknown) => {
      throw unavailable(`apt-cache cannot resolve ${pkg}`, err);
    });
    const dep = parseKernelDependency(out);
    if (dep === undefined) throw unavailable(`${pkg} depends on no versioned linux-image package`);
    name = dep;
  }
  const show = await runCommand('apt-cache', ['show', '--no-all-versions', name], { step }).catch(
    (err: unknown) => {
      throw unavailable(`apt-cache has no ${name}`, err);
    },
  );
  const f = parseAptShow(show);
  if (f.Version === undefined || f.SHA256 === undefined)
    throw unavailable(`apt-cache show ${name} lacks Version/SHA256`);
  return { name, version: f.Version, sha256: f.SHA256, size: Number(f.Size ?? 0) };
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    total += (await stat(join(dir, name)).catch(() => undefined))?.size ?? 0;
  }
  return total;
}

/**
 * Downloads the package's .deb into `dir`, reporting bytes as they arrive.
 * @returns the .deb path
 * @throws {AenvError} `GUEST_KERNEL_UNAVAILABLE`.
 */
export async function downloadKernelPackage(
  pkg: KernelPackage,
  dir: string,
  progress: StageProgress,
): Promise<string> {
  const timer = setInterval(() => {
    void dirBytes(dir).then((bytes) =>
      progress({
        bytes,
        totalBytes: pkg.size,
        percent: pkg.size > 0 ? (60 * bytes) / pkg.size : 0,
        message: `downloading ${pkg.name}`,
      }),
    );
  }, 250);
  try {
    // root downloads without apt's _apt sandbox user, which cannot write here
    await runCommand(
      'apt-get',
      ['download', '-q', '-o', 'APT::Sandbox::User=root', `${pkg.name}=${pkg.version}`],
      {
        step: 'kernel: download',
        cwd: dir,
      },
    );
  } catch (err) {
    throw unavailable(`apt-get download ${pkg.name}=${pkg.version} failed`, err);
  } finally {
    clearInterval(timer);
  }
  const deb = (await readdir(dir)).find((n) => n.endsWith('.deb'));
  if (deb === undefined) throw unavailable(`apt-get download ${pkg.name} produced no .deb`);
  return join(dir, deb);
}
