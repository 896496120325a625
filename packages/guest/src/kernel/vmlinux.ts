/**
 * Turning Debian's compressed kernel (`vmlinuz`, a bzImage with an LZ4
 * payload) into the uncompressed ELF `vmlinux` that QEMU boots directly
 * through the Xen PVH entry point (runtime-lab §A: no in-guest
 * decompression, ~300 ms less per cold boot under TCG).
 *
 * The payload is located from the x86 boot protocol header
 * (Documentation/arch/x86/boot.rst): `setup_sects` at 0x1f1, `payload_offset`
 * at 0x248 and `payload_length` at 0x24c, relative to the protected-mode
 * code at `(setup_sects + 1) * 512`. The payload's last 4 bytes are the
 * uncompressed size (appended for the kernel's own decompressor), which the
 * result is checked against.
 *
 * @module
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { AenvError } from '@aenv/shared';
import { runCommand } from '../run-command.js';
import { elfNotes } from './elf.js';

/** LZ4 legacy frame magic, as the kernel's LZ4 compressor writes it. */
const LZ4_LEGACY_MAGIC = 0x184c2102;
/** `XEN_ELFNOTE_PHYS32_ENTRY`: the PVH entry point note. */
export const XEN_ELFNOTE_PHYS32_ENTRY = 18;

/** Where the compressed payload is, and how large the result must be. */
export interface KernelPayload {
  readonly start: number;
  readonly end: number;
  readonly uncompressedBytes: number;
}

/** Finds the LZ4 payload of a bzImage (pure). */
export function locateLz4Payload(bz: Buffer): KernelPayload {
  if (bz.length < 0x250 || bz.toString('latin1', 0x202, 0x206) !== 'HdrS') {
    throw new Error('not an x86 bzImage (no HdrS boot header)');
  }
  const setupSects = bz[0x1f1] === 0 ? 4 : (bz[0x1f1] as number);
  const start = (setupSects + 1) * 512 + bz.readUInt32LE(0x248);
  const length = bz.readUInt32LE(0x24c);
  if (start + length > bz.length || length < 8)
    throw new Error('bzImage payload lies outside the file');
  if (bz.readUInt32LE(start) !== LZ4_LEGACY_MAGIC) {
    throw new Error('bzImage payload is not LZ4 (this kernel was built with another compressor)');
  }
  return { start, end: start + length - 4, uncompressedBytes: bz.readUInt32LE(start + length - 4) };
}

/** Whether an ELF kernel has the PVH entry note (so QEMU can boot it directly). */
export function hasPvhNote(elf: Buffer): boolean {
  return elfNotes(elf).some((n) => n.name === 'Xen' && n.type === XEN_ELFNOTE_PHYS32_ENTRY);
}

/**
 * Writes the uncompressed PVH `vmlinux` from `vmlinuzPath` to `outPath`.
 * @throws {AenvError} `GUEST_BUILD_FAILED` if the image is not an LZ4
 *   bzImage or the result is not a PVH-bootable ELF; `GUEST_TOOL_MISSING` (lz4).
 */
export async function extractVmlinux(vmlinuzPath: string, outPath: string): Promise<void> {
  const step = 'kernel: extract vmlinux';
  const bz = await readFile(vmlinuzPath);
  let payload: KernelPayload;
  try {
    payload = locateLz4Payload(bz);
  } catch (err) {
    throw new AenvError(
      'GUEST_BUILD_FAILED',
      `${step}: ${vmlinuzPath}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const packed = `${outPath}.lz4`;
  await writeFile(packed, bz.subarray(payload.start, payload.end));
  try {
    await runCommand('lz4', ['-d', '-f', '-q', packed, outPath], { step });
  } finally {
    await rm(packed, { force: true });
  }
  const size = (await stat(outPath)).size;
  if (size !== payload.uncompressedBytes || !hasPvhNote(await readFile(outPath))) {
    throw new AenvError(
      'GUEST_BUILD_FAILED',
      `${step}: the result is not a PVH-bootable ELF kernel (${size} bytes)`,
    );
  }
}
