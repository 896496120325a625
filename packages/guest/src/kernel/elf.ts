/**
 * The little ELF64 reading the kernel stage needs: section contents by name
 * (a module's `.modinfo`) and notes (the Xen PVH entry note of `vmlinux`).
 * Little-endian x86-64 only. Layout: the System V gABI, "ELF Header",
 * "Section Header", "Program Header" and "Note Section".
 *
 * @module
 */

/** ELF program header type of a note segment. */
const PT_NOTE = 4;

function assertElf64(buf: Buffer): void {
  if (buf.length < 64 || buf.readUInt32BE(0) !== 0x7f454c46 || buf[4] !== 2 || buf[5] !== 1) {
    throw new Error('not a little-endian ELF64 file');
  }
}

/** The bytes of the section named `name`, or undefined. */
export function elfSection(buf: Buffer, name: string): Buffer | undefined {
  assertElf64(buf);
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const shstrndx = buf.readUInt16LE(0x3e);
  const header = (i: number): { name: number; offset: number; size: number } => {
    const at = shoff + i * shentsize;
    return {
      name: buf.readUInt32LE(at),
      offset: Number(buf.readBigUInt64LE(at + 0x18)),
      size: Number(buf.readBigUInt64LE(at + 0x20)),
    };
  };
  const strtab = header(shstrndx);
  for (let i = 0; i < shnum; i++) {
    const h = header(i);
    const start = strtab.offset + h.name;
    const end = buf.indexOf(0, start);
    if (buf.toString('latin1', start, end) === name)
      return buf.subarray(h.offset, h.offset + h.size);
  }
  return undefined;
}

/** One ELF note. */
export interface ElfNote {
  readonly name: string;
  readonly type: number;
  readonly desc: Buffer;
}

/** All notes of the file's PT_NOTE segments. */
export function elfNotes(buf: Buffer): ElfNote[] {
  assertElf64(buf);
  const phoff = Number(buf.readBigUInt64LE(0x20));
  const phentsize = buf.readUInt16LE(0x36);
  const phnum = buf.readUInt16LE(0x38);
  const notes: ElfNote[] = [];
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (buf.readUInt32LE(at) !== PT_NOTE) continue;
    const offset = Number(buf.readBigUInt64LE(at + 0x08));
    const size = Number(buf.readBigUInt64LE(at + 0x20));
    notes.push(...parseNotes(buf.subarray(offset, offset + size)));
  }
  return notes;
}

const align4 = (n: number): number => (n + 3) & ~3;

function parseNotes(seg: Buffer): ElfNote[] {
  const notes: ElfNote[] = [];
  let p = 0;
  while (p + 12 <= seg.length) {
    const namesz = seg.readUInt32LE(p);
    const descsz = seg.readUInt32LE(p + 4);
    const type = seg.readUInt32LE(p + 8);
    const nameStart = p + 12;
    const descStart = nameStart + align4(namesz);
    const name = seg.toString('latin1', nameStart, nameStart + Math.max(0, namesz - 1));
    notes.push({ name, type, desc: seg.subarray(descStart, descStart + descsz) });
    p = descStart + align4(descsz);
  }
  return notes;
}
