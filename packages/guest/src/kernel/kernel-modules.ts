/**
 * Kernel modules for the initramfs: which `.ko` files, in which order.
 *
 * The package's `modules.dep` is generated at install time (depmod), which
 * we skip, so dependencies are read from each module's `.modinfo` section
 * (`depends=a,b`). Module names use `_`; file names may use `-`
 * (`virtio-rng.ko` is module `virtio_rng`).
 *
 * @module
 */
import { elfSection } from './elf.js';

/** The modules an aenv guest needs (its dependencies are added). */
export const GUEST_MODULES: readonly string[] = [
  'virtio_mmio', // microvm's virtio transport (found through ACPI)
  'virtio_blk', // rootfs and tools drives
  'virtio_net', // eth0
  'virtio_rng', // entropy from the host (also reseeds clones over time)
  'virtio_balloon', // free-page reporting: memory the guest frees goes back to the host
  'erofs', // the tools image
];

/** Normalized module name of a file name or module name. */
export function moduleName(fileOrName: string): string {
  return fileOrName.replace(/\.ko$/, '').replaceAll('-', '_');
}

/** The `depends=` list of a module's `.modinfo`. */
export function moduleDepends(ko: Buffer): string[] {
  const info = elfSection(ko, '.modinfo');
  if (info === undefined) throw new Error('no .modinfo section');
  for (const entry of info.toString('latin1').split('\0')) {
    if (entry.startsWith('depends=')) {
      return entry
        .slice('depends='.length)
        .split(',')
        .filter((d) => d !== '')
        .map(moduleName);
    }
  }
  return [];
}

/**
 * Load order for `wanted` and their dependencies: every module after its
 * dependencies (depth-first post-order, so the order is deterministic).
 * @throws {Error} on an unknown module or a dependency cycle.
 */
export function moduleLoadOrder(
  wanted: readonly string[],
  dependsOf: (name: string) => readonly string[],
): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: readonly string[]): void => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting')
      throw new Error(`module dependency cycle: ${[...path, name].join(' -> ')}`);
    state.set(name, 'visiting');
    for (const dep of dependsOf(name)) visit(dep, [...path, name]);
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of wanted) visit(moduleName(name), []);
  return order;
}
