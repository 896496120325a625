/**
 * A writer for the cpio "newc" format the kernel unpacks as initramfs
 * (Documentation/driver-api/early-userspace/buffer-format.rst): per entry a
 * 110-byte ASCII header (`070701` + 13 fields of 8 hex digits), the
 * NUL-terminated name padded to 4 bytes, the data padded to 4 bytes; then a
 * `TRAILER!!!` entry. Output is deterministic (inode numbers in entry
 * order, mtime 0, owner root), so equal inputs give equal archives.
 *
 * @module
 */

/** One archive member. Paths are relative, without a leading `/`. */
export type CpioEntry =
  | { readonly type: 'dir'; readonly path: string; readonly mode: number }
  | { readonly type: 'file'; readonly path: string; readonly mode: number; readonly data: Buffer }
  | { readonly type: 'symlink'; readonly path: string; readonly target: string }
  | {
      readonly type: 'chardev';
      readonly path: string;
      readonly mode: number;
      readonly major: number;
      readonly minor: number;
    };

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');
const pad4 = (n: number): number => (4 - (n % 4)) % 4;

interface Header {
  readonly ino: number;
  readonly mode: number;
  readonly nlink: number;
  readonly size: number;
  readonly rdev: readonly [number, number];
  readonly name: string;
}

function header(h: Header): Buffer {
  const nameBytes = Buffer.byteLength(h.name) + 1;
  const fields = [
    h.ino,
    h.mode,
    0,
    0,
    h.nlink,
    0,
    h.size,
    0,
    0,
    h.rdev[0],
    h.rdev[1],
    nameBytes,
    0,
  ];
  const head = `070701${fields.map(hex8).join('')}`; // 6 + 13 * 8 = 110 bytes
  return Buffer.concat([
    Buffer.from(head, 'latin1'),
    Buffer.from(`${h.name}\0`),
    Buffer.alloc(pad4(110 + nameBytes)),
  ]);
}

function describe(e: CpioEntry): {
  mode: number;
  data: Buffer;
  rdev: [number, number];
  nlink: number;
} {
  switch (e.type) {
    case 'dir':
      return { mode: S_IFDIR | e.mode, data: Buffer.alloc(0), rdev: [0, 0], nlink: 2 };
    case 'file':
      return { mode: S_IFREG | e.mode, data: e.data, rdev: [0, 0], nlink: 1 };
    case 'symlink':
      return { mode: S_IFLNK | 0o777, data: Buffer.from(e.target), rdev: [0, 0], nlink: 1 };
    case 'chardev':
      return { mode: S_IFCHR | e.mode, data: Buffer.alloc(0), rdev: [e.major, e.minor], nlink: 1 };
  }
}

/** Serializes entries (in the given order) into a newc archive. */
export function writeCpio(entries: readonly CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  let ino = 1;
  for (const e of entries) {
    if (e.path === '' || e.path.startsWith('/'))
      throw new Error(`cpio path must be relative: ${JSON.stringify(e.path)}`);
    const d = describe(e);
    parts.push(
      header({
        ino: ino++,
        mode: d.mode,
        nlink: d.nlink,
        size: d.data.length,
        rdev: d.rdev,
        name: e.path,
      }),
    );
    parts.push(d.data, Buffer.alloc(pad4(d.data.length)));
  }
  parts.push(header({ ino: 0, mode: 0, nlink: 1, size: 0, rdev: [0, 0], name: 'TRAILER!!!' }));
  return Buffer.concat(parts);
}
