/**
 * Stage `initramfs`: an uncompressed cpio (faster than gzip under TCG,
 * runtime-lab §A) holding static busybox with its applet links, the
 * kernel's guest modules with their load order, `/dev/console`, and
 * `assets/initramfs-init.sh` as `/init`. Inputs: the kernel artifact key,
 * the busybox binary's digest, the init script's digest. Output:
 * `initrd.cpio`.
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import { sha256File, type Artifact } from '../artifact-store.js';
import { ASSETS, assetPath } from '../assets.js';
import type { KernelArtifact } from '../kernel/prepare-kernel.js';
import { elfNotes } from '../kernel/elf.js';
import { runCommand } from '../run-command.js';
import { artifactPath, runStage, type StageContext } from '../stage.js';
import { writeCpio, type CpioEntry } from './cpio.js';

const RECIPE = 1;
/** Where busybox-static installs (Debian). */
export const DEFAULT_BUSYBOX = '/bin/busybox';

/** The initramfs stage's result. */
export interface InitramfsArtifact {
  readonly artifact: Artifact;
  readonly initrd: string;
}

/** Whether an ELF binary is statically linked (no PT_INTERP). */
function isStatic(elf: Buffer): boolean {
  elfNotes(elf); // validates the ELF header
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  const phnum = elf.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) if (elf.readUInt32LE(phoff + i * phentsize) === 3) return false;
  return true;
}

/** The archive's entries (pure apart from its inputs). */
export function initramfsEntries(
  busybox: Buffer,
  applets: readonly string[],
  init: Buffer,
  modules: readonly { name: string; data: Buffer }[],
): CpioEntry[] {
  const dirs = ['bin', 'dev', 'proc', 'sys', 'tmp', 'newroot', 'lib', 'lib/modules'];
  const entries: CpioEntry[] = dirs.map((path) => ({ type: 'dir', path, mode: 0o755 }));
  entries.push({ type: 'chardev', path: 'dev/console', mode: 0o600, major: 5, minor: 1 });
  entries.push({ type: 'file', path: 'bin/busybox', mode: 0o755, data: busybox });
  for (const a of applets)
    if (a !== 'busybox') entries.push({ type: 'symlink', path: `bin/${a}`, target: 'busybox' });
  for (const m of modules)
    entries.push({ type: 'file', path: `lib/modules/${m.name}.ko`, mode: 0o644, data: m.data });
  const order = Buffer.from(`${modules.map((m) => m.name).join('\n')}\n`);
  entries.push({ type: 'file', path: 'lib/modules/load-order', mode: 0o644, data: order });
  entries.push({ type: 'file', path: 'init', mode: 0o755, data: init });
  return entries;
}

/**
 * Builds the initramfs (see the module comment).
 * @throws {AenvError} `GUEST_TOOL_MISSING` (busybox-static), `GUEST_BUILD_FAILED`.
 */
export async function prepareInitramfs(
  ctx: StageContext,
  kernel: KernelArtifact,
  busyboxPath = DEFAULT_BUSYBOX,
): Promise<InitramfsArtifact> {
  const initScript = assetPath(ASSETS.initramfsInit);
  const busyboxDigest = await sha256File(busyboxPath).catch((err: unknown) => {
    throw new AenvError(
      'GUEST_TOOL_MISSING',
      `initramfs: ${busyboxPath} is missing (apt-get install busybox-static)`,
      {
        cause: err,
      },
    );
  });
  const inputs = {
    recipe: RECIPE,
    kernel: kernel.artifact.key,
    busybox: busyboxDigest,
    init: await sha256File(initScript),
  };
  const artifact = await runStage(ctx, 'initramfs', inputs, async (work) => {
    const busybox = await readFile(busyboxPath);
    if (!isStatic(busybox)) {
      throw new AenvError(
        'GUEST_TOOL_MISSING',
        `initramfs: ${busyboxPath} is not static (apt-get install busybox-static)`,
      );
    }
    const list = await runCommand(busyboxPath, ['--list'], { step: 'initramfs: busybox applets' });
    const applets = list.split('\n').filter((a) => /^[a-z0-9_.[-]+$/.test(a));
    const modules = await Promise.all(
      kernel.modules.map(async (name) => ({
        name,
        data: await readFile(join(kernel.modulesDir, `${name}.ko`)),
      })),
    );
    const cpio = writeCpio(initramfsEntries(busybox, applets, await readFile(initScript), modules));
    await writeFile(join(work, 'initrd.cpio'), cpio);
    return { files: ['initrd.cpio'], meta: { applets: applets.length, modules: kernel.modules } };
  });
  return { artifact, initrd: artifactPath(artifact, 'initrd.cpio') };
}
