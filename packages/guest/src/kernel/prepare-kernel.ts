/**
 * Stage `kernel`: Debian's cloud kernel as an uncompressed PVH `vmlinux`,
 * plus the few modules the guest needs and their load order.
 *
 * Inputs (the cache key): the resolved package name, version and SHA-256,
 * the module list and the recipe version. Outputs: `vmlinux`, `config`,
 * `modules/<name>.ko` and `modules/load-order` (one name per line, each
 * after its dependencies). The unpacked package is discarded.
 *
 * @module
 */
import { copyFile, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { Artifact } from '../artifact-store.js';
import { runCommand } from '../run-command.js';
import { artifactPath, runStage, type StageContext } from '../stage.js';
import {
  DEFAULT_KERNEL_PACKAGE,
  downloadKernelPackage,
  resolveKernelPackage,
  type KernelPackage,
} from './apt-kernel.js';
import { GUEST_MODULES, moduleDepends, moduleLoadOrder, moduleName } from './kernel-modules.js';
import { extractVmlinux } from './vmlinux.js';

/** Bump when the build below changes its output for the same inputs. */
const RECIPE = 1;

/** The kernel stage's result. */
export interface KernelArtifact {
  readonly artifact: Artifact;
  /** Uncompressed PVH kernel. */
  readonly vmlinux: string;
  /** Directory with `<name>.ko` files and `load-order`. */
  readonly modulesDir: string;
  /** Module names in load order. */
  readonly modules: readonly string[];
  /** Kernel release, e.g. `6.1.0-57-cloud-amd64`. */
  readonly release: string;
  readonly package: KernelPackage;
}

/** Options of {@link prepareKernel}. */
export interface KernelOptions {
  /** A kernel metapackage or versioned package. @default 'linux-image-cloud-amd64' */
  readonly kernelPackage?: string;
  /**
   * When apt cannot resolve the package (stale or missing package lists, as
   * on a fresh machine), run `apt-get update` once and retry. @default true
   */
  readonly aptUpdate?: boolean;
}

/** The kernel stage's cache inputs for a resolved package. */
export function kernelInputs(pkg: KernelPackage): unknown {
  return { recipe: RECIPE, package: pkg, modules: GUEST_MODULES };
}

/**
 * Resolves the package; when apt cannot (stale lists: `apt-get update`
 * once and retry; offline: fall back to the newest cached kernel, so a node
 * restarts without its mirror).
 */
async function resolvePackage(ctx: StageContext, options: KernelOptions): Promise<KernelPackage> {
  const name = options.kernelPackage ?? DEFAULT_KERNEL_PACKAGE;
  const say = (message: string): void =>
    ctx.onProgress?.({ stage: 'kernel', status: 'progress', message });
  try {
    return await resolveKernelPackage(name);
  } catch (err) {
    if (options.aptUpdate !== false) {
      say('apt-get update (package lists are stale)');
      await runCommand('apt-get', ['update', '-qq'], { step: 'kernel: apt-get update' }).catch(
        () => undefined,
      );
      const again = await resolveKernelPackage(name).catch(() => undefined);
      if (again !== undefined) return again;
    }
    const cached = (await ctx.store.list('kernel'))
      .map((a) => a.meta.package as KernelPackage | undefined)
      .find((p) => p !== undefined && (p.name === name || name === DEFAULT_KERNEL_PACKAGE));
    if (cached === undefined) throw err;
    say(`apt cannot resolve ${name}; using the cached ${cached.name} ${cached.version}`);
    return cached;
  }
}

async function* walk(dir: string): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else yield p;
  }
}

async function indexModules(root: string): Promise<Map<string, string>> {
  const byName = new Map<string, string>();
  for await (const file of walk(root)) {
    if (file.endsWith('.ko')) byName.set(moduleName(file.slice(file.lastIndexOf('/') + 1)), file);
  }
  return byName;
}

async function findRelease(pkgRoot: string): Promise<string> {
  const vmlinuz = (await readdir(join(pkgRoot, 'boot'))).find((n) => n.startsWith('vmlinuz-'));
  if (vmlinuz === undefined) {
    throw new AenvError('GUEST_BUILD_FAILED', 'kernel: the package has no boot/vmlinuz-*');
  }
  return vmlinuz.slice('vmlinuz-'.length);
}

async function collectModules(pkgRoot: string, release: string, outDir: string): Promise<string[]> {
  const candidates = [
    join(pkgRoot, 'lib/modules', release),
    join(pkgRoot, 'usr/lib/modules', release),
  ];
  const index = new Map<string, string>();
  for (const c of candidates) for (const [k, v] of await indexModules(c)) index.set(k, v);
  const depsCache = new Map<string, string[]>();
  const dependsOf = (name: string): string[] => depsCache.get(name) ?? [];
  // read dependencies breadth-first so moduleLoadOrder can stay synchronous and pure
  const queue = GUEST_MODULES.map(moduleName);
  while (queue.length > 0) {
    const name = queue.shift() as string;
    if (depsCache.has(name)) continue;
    const file = index.get(name);
    if (file === undefined)
      throw new AenvError('GUEST_BUILD_FAILED', `kernel: module ${name} is not in the package`);
    const deps = moduleDepends(await readFile(file));
    depsCache.set(name, deps);
    queue.push(...deps);
  }
  const order = moduleLoadOrder(GUEST_MODULES, dependsOf);
  await mkdir(outDir);
  for (const name of order) await copyFile(index.get(name) as string, join(outDir, `${name}.ko`));
  await writeFile(join(outDir, 'load-order'), `${order.join('\n')}\n`);
  return order;
}

/**
 * Prepares the kernel (see the module comment).
 * @throws {AenvError} `GUEST_KERNEL_UNAVAILABLE`, `GUEST_BUILD_FAILED`, `GUEST_TOOL_MISSING`.
 */
export async function prepareKernel(
  ctx: StageContext,
  options: KernelOptions = {},
): Promise<KernelArtifact> {
  const pkg = await resolvePackage(ctx, options);
  const inputs = kernelInputs(pkg);
  const artifact = await runStage(ctx, 'kernel', inputs, async (work, progress) => {
    const dl = join(work, 'download');
    const unpacked = join(work, 'package');
    await mkdir(dl);
    const deb = await downloadKernelPackage(pkg, dl, progress);
    progress({ percent: 60, message: `unpacking ${pkg.name}` });
    await runCommand('dpkg-deb', ['-x', deb, unpacked], { step: 'kernel: unpack' });
    const release = await findRelease(unpacked);
    progress({ percent: 75, message: 'extracting the PVH vmlinux' });
    await extractVmlinux(join(unpacked, 'boot', `vmlinuz-${release}`), join(work, 'vmlinux'));
    await copyFile(join(unpacked, 'boot', `config-${release}`), join(work, 'config'));
    progress({ percent: 90, message: 'collecting modules' });
    const order = await collectModules(unpacked, release, join(work, 'modules'));
    await rm(dl, { recursive: true, force: true });
    await rm(unpacked, { recursive: true, force: true });
    const files = [
      'vmlinux',
      'config',
      'modules/load-order',
      ...order.map((m) => `modules/${m}.ko`),
    ];
    return { files, meta: { release, modules: order, package: pkg } };
  });
  return {
    artifact,
    vmlinux: artifactPath(artifact, 'vmlinux'),
    modulesDir: join(artifact.dir, 'modules'),
    modules: artifact.meta.modules as string[],
    release: artifact.meta.release as string,
    package: pkg,
  };
}
