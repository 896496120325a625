// A fake kernel built with the real tools: gcc makes a static ELF that
// carries the Xen PVH entry note (and a `.modinfo` section, for the module
// reader), lz4 compresses it in the kernel's legacy format, and a minimal
// x86 boot header around it makes a bzImage.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { elfNotes, elfSection } from './elf.js';
import { moduleDepends } from './kernel-modules.js';
import {
  extractVmlinux,
  hasPvhNote,
  locateLz4Payload,
  XEN_ELFNOTE_PHYS32_ENTRY,
} from './vmlinux.js';

const SOURCE = `
__asm__(".pushsection .note.Xen, \\"a\\", @note\\n .balign 4\\n .long 4\\n .long 8\\n .long 18\\n .asciz \\"Xen\\"\\n .balign 4\\n .quad 0x1000000\\n .balign 4\\n .popsection\\n");
const char modinfo[] __attribute__((section(".modinfo"), used)) = "license=GPL\\0depends=virtio,virtio-ring\\0vermagic=x";
int main(void) { return 0; }
`;

/** A bzImage: boot sector with the header fields the extractor reads, then the payload. */
function bzImage(payload: Buffer, uncompressed: number): Buffer {
  const setupSects = 1;
  const head = Buffer.alloc((setupSects + 1) * 512);
  head[0x1f1] = setupSects;
  head.write('HdrS', 0x202, 'latin1');
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32LE(uncompressed);
  const pad = Buffer.alloc(100);
  head.writeUInt32LE(pad.length, 0x248);
  head.writeUInt32LE(payload.length + 4, 0x24c);
  return Buffer.concat([head, pad, payload, trailer, Buffer.from('trailing junk')]);
}

describe('kernel extraction with real gcc and lz4', () => {
  let dir = '';
  let elf = Buffer.alloc(0);
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-vmlinux-'));
    await writeFile(join(dir, 'k.c'), SOURCE);
    execFileSync('gcc', ['-static', '-O0', '-o', join(dir, 'k.elf'), join(dir, 'k.c')]);
    execFileSync('lz4', ['-l', '-f', '-q', join(dir, 'k.elf'), join(dir, 'k.lz4')]);
    elf = await readFile(join(dir, 'k.elf'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('reads notes and sections of an ELF', () => {
    assert.ok(
      elfNotes(elf).some(
        (n) => n.name === 'Xen' && n.type === XEN_ELFNOTE_PHYS32_ENTRY && n.desc.length === 8,
      ),
    );
    assert.ok(elfNotes(elf).some((n) => n.name === 'GNU'));
    assert.match(
      elfSection(elf, '.modinfo')?.toString('latin1') ?? '',
      /depends=virtio,virtio-ring/,
    );
    assert.equal(elfSection(elf, '.nope'), undefined);
    assert.deepEqual(moduleDepends(elf), ['virtio', 'virtio_ring']);
    assert.throws(
      () => elfNotes(Buffer.from('not an elf at all, not at all, not even close to one........')),
      /not a little-endian ELF64/,
    );
  });

  it('turns an LZ4 bzImage into the PVH ELF, checked against the size trailer', async () => {
    const bz = bzImage(await readFile(join(dir, 'k.lz4')), elf.length);
    const p = locateLz4Payload(bz);
    assert.equal(p.start, 1024 + 100);
    assert.equal(p.uncompressedBytes, elf.length);
    await writeFile(join(dir, 'vmlinuz'), bz);
    await extractVmlinux(join(dir, 'vmlinuz'), join(dir, 'vmlinux'));
    assert.deepEqual(await readFile(join(dir, 'vmlinux')), elf);
    assert.equal(hasPvhNote(elf), true);
  });

  it('refuses a non-bzImage, a non-LZ4 payload and a kernel without the PVH note', async () => {
    assert.throws(() => locateLz4Payload(Buffer.alloc(4096)), /no HdrS/);
    assert.throws(() => locateLz4Payload(bzImage(Buffer.from('gzip data here'), 10)), /not LZ4/);
    await writeFile(join(dir, 'plain.c'), 'int main(void) { return 0; }\n');
    execFileSync('gcc', ['-static', '-o', join(dir, 'plain.elf'), join(dir, 'plain.c')]);
    execFileSync('lz4', ['-l', '-f', '-q', join(dir, 'plain.elf'), join(dir, 'plain.lz4')]);
    const plain = await readFile(join(dir, 'plain.elf'));
    await writeFile(
      join(dir, 'plain.bz'),
      bzImage(await readFile(join(dir, 'plain.lz4')), plain.length),
    );
    await assert.rejects(
      extractVmlinux(join(dir, 'plain.bz'), join(dir, 'plain.out')),
      (e: Error & { code?: string }) =>
        e.code === 'GUEST_BUILD_FAILED' && /not a PVH-bootable/.test(e.message),
    );
  });
});
