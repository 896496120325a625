/**
 * A streaming tar reader, written from POSIX.1-2001 (ustar + pax) and GNU
 * tar's format notes, for OCI layers: it yields each entry's header and a
 * body stream that must be consumed (or is skipped) before the next entry.
 *
 * Supported: ustar names with prefix, pax extended headers (`x` per entry,
 * `g` global: `path`, `linkpath`, `size`, `uid`, `gid`, `mtime`,
 * `SCHILY.xattr.*`), GNU long names and long link names (`L`, `K`),
 * base-256 numbers, header checksums. Sparse files (`S`, pax GNU.sparse)
 * are refused (`IMAGE_UNSUPPORTED`); a malformed archive is `IMAGE_INVALID`.
 * Paths are normalised (`./a/b` → `a/b`); a path with a `..` component is refused.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** What an entry is. */
export type TarEntryType =
  'file' | 'directory' | 'symlink' | 'hardlink' | 'char' | 'block' | 'fifo';

/** One entry's header. */
export interface TarEntry {
  /** Normalised relative path (`''` is the archive root). */
  readonly path: string;
  readonly type: TarEntryType;
  /** Permission bits including setuid, setgid and sticky (`& 0o7777`). */
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
  /** Seconds since the epoch (may have a fraction, from pax). */
  readonly mtime: number;
  /** Symlink target, or the hardlink's target path (normalised). */
  readonly linkname: string;
  readonly devmajor: number;
  readonly devminor: number;
  /** Extended attributes from pax `SCHILY.xattr.<name>` records. */
  readonly xattrs: Readonly<Record<string, Buffer>>;
}

/** An entry and its contents (files only have a non-empty body). */
export interface TarItem {
  readonly entry: TarEntry;
  readonly body: AsyncIterable<Buffer>;
}

const BLOCK = 512;
const TYPES: Record<string, TarEntryType> = {
  '0': 'file',
  '\0': 'file',
  '7': 'file',
  '1': 'hardlink',
  '2': 'symlink',
  '3': 'char',
  '4': 'block',
  '5': 'directory',
  '6': 'fifo',
};

function bad(why: string): AenvError {
  return new AenvError('IMAGE_INVALID', `layer is not a valid tar archive: ${why}`);
}

/** Reads exact byte counts from a chunked source. */
class ByteReader {
  readonly #it: AsyncIterator<Buffer>;
  #buf: Buffer = Buffer.alloc(0);
  #done = false;

  constructor(source: AsyncIterable<Buffer>) {
    this.#it = source[Symbol.asyncIterator]();
  }

  /** Up to `n` bytes (fewer only at the end of the source). */
  async read(n: number): Promise<Buffer> {
    while (this.#buf.length < n && !this.#done) {
      const next = await this.#it.next();
      if (next.done === true) this.#done = true;
      else this.#buf = this.#buf.length === 0 ? next.value : Buffer.concat([this.#buf, next.value]);
    }
    const out = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(out.length);
    return out;
  }

  /** Some bytes, at most `max` (for streaming bodies without copying). */
  async some(max: number): Promise<Buffer> {
    if (this.#buf.length === 0 && !this.#done) {
      const next = await this.#it.next();
      if (next.done === true) this.#done = true;
      else this.#buf = next.value;
    }
    const out = this.#buf.subarray(0, max);
    this.#buf = this.#buf.subarray(out.length);
    return out;
  }

  async skip(n: number): Promise<void> {
    let left = n;
    while (left > 0) {
      const got = await this.some(Math.min(left, 1 << 20));
      if (got.length === 0) throw bad('truncated');
      left -= got.length;
    }
  }
}

function text(buf: Buffer, start: number, len: number): string {
  const field = buf.subarray(start, start + len);
  const nul = field.indexOf(0);
  return field.subarray(0, nul < 0 ? len : nul).toString('utf8');
}

function num(buf: Buffer, start: number, len: number): number {
  const field = buf.subarray(start, start + len);
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let v = BigInt((field[0] ?? 0) & 0x7f);
    for (let i = 1; i < field.length; i++) v = (v << 8n) | BigInt(field[i] ?? 0);
    return Number(v);
  }
  const s = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw bad(`bad number field '${s}'`);
  return parseInt(s, 8);
}

function checksumOk(h: Buffer): boolean {
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 32 : (h[i] ?? 0);
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  const want = num(h, 148, 8);
  return want === unsigned || want === signed;
}

/** Parses pax records (`<len> <key>=<value>\n`). */
export function parsePax(data: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const len = Number(data.subarray(at, space).toString('latin1'));
    if (!Number.isInteger(len) || len <= 0 || at + len > data.length) throw bad('bad pax record');
    const record = data.subarray(space + 1, at + len - 1);
    const eq = record.indexOf(0x3d);
    if (eq > 0) out.set(record.subarray(0, eq).toString('utf8'), record.subarray(eq + 1));
    at += len;
  }
  return out;
}

/**
 * Normalises a tar path: no leading `/` or `./`, no empty or `.` components.
 * @throws {AenvError} `IMAGE_INVALID` for a `..` component.
 */
export function normaliseTarPath(raw: string): string {
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw bad(`entry '${raw}' escapes the archive root`);
  return parts.join('/');
}

interface Overrides {
  path?: string;
  linkname?: string;
  pax: Map<string, Buffer>;
}

/** Reads a tar stream entry by entry. */
export async function* readTar(source: AsyncIterable<Buffer>): AsyncGenerator<TarItem> {
  const r = new ByteReader(source);
  const global = new Map<string, Buffer>();
  let next: Overrides = { pax: new Map() };
  for (;;) {
    const h = await readHeader(r);
    if (h === undefined) return;
    const flag = String.fromCharCode(h[156] ?? 0);
    const size = num(h, 124, 12);
    if (EXTENDED.has(flag)) {
      await readExtended(r, flag, size, { global, next });
      continue;
    }
    const entry = buildEntry(h, flag, global, next);
    next = { pax: new Map() };
    // Only regular files carry data; other types' size fields are ignored (as Go's archive/tar does).
    const dataBytes = entry === undefined ? size : entry.type === 'file' ? entry.size : 0;
    const dataPadded = Math.ceil(dataBytes / BLOCK) * BLOCK;
    if (entry === undefined) {
      await r.skip(dataPadded);
      continue;
    }
    const state = { left: dataBytes };
    yield { entry, body: bodyOf(r, entry.path, state) };
    await r.skip(state.left + dataPadded - dataBytes);
  }
}

const EXTENDED = new Set(['x', 'g', 'L', 'K']);

/** The next header block, or undefined at the end of the archive. */
async function readHeader(r: ByteReader): Promise<Buffer | undefined> {
  const h = await r.read(BLOCK);
  if (h.length === 0 || h.every((b) => b === 0)) return undefined;
  if (h.length < BLOCK) throw bad('truncated header');
  if (!checksumOk(h)) throw bad('header checksum mismatch');
  return h;
}

/** Reads a pax or GNU long-name header into what applies to the next entries. */
async function readExtended(
  r: ByteReader,
  flag: string,
  size: number,
  into: { global: Map<string, Buffer>; next: Overrides },
): Promise<void> {
  const data = await r.read(size);
  if (data.length < size) throw bad('truncated extended header');
  await r.skip(Math.ceil(size / BLOCK) * BLOCK - size);
  if (flag === 'x') for (const [k, v] of parsePax(data)) into.next.pax.set(k, v);
  else if (flag === 'g') for (const [k, v] of parsePax(data)) into.global.set(k, v);
  else if (flag === 'L') into.next.path = text(data, 0, data.length);
  else into.next.linkname = text(data, 0, data.length);
}

async function* bodyOf(
  r: ByteReader,
  path: string,
  state: { left: number },
): AsyncGenerator<Buffer> {
  while (state.left > 0) {
    const chunk = await r.some(Math.min(state.left, 1 << 20));
    if (chunk.length === 0) throw bad(`truncated contents of '${path}'`);
    state.left -= chunk.length;
    yield chunk;
  }
}

function buildEntry(
  h: Buffer,
  flag: string,
  global: Map<string, Buffer>,
  o: Overrides,
): TarEntry | undefined {
  if (flag === 'S' || o.pax.has('GNU.sparse.major') || o.pax.has('GNU.sparse.size')) {
    throw new AenvError(
      'IMAGE_UNSUPPORTED',
      'layer has a sparse tar entry, which is not supported',
    );
  }
  if (flag === 'V') return undefined;
  const type = TYPES[flag];
  if (type === undefined)
    throw new AenvError('IMAGE_UNSUPPORTED', `tar entry type '${flag}' is not supported`);
  const pax = new Map([...global, ...o.pax]);
  const str = (k: string): string | undefined => pax.get(k)?.toString('utf8');
  const magic = h.subarray(257, 263).toString('latin1');
  const prefix = magic === 'ustar\0' ? text(h, 345, 155) : '';
  const rawPath =
    str('path') ?? o.path ?? (prefix === '' ? text(h, 0, 100) : `${prefix}/${text(h, 0, 100)}`);
  const rawLink = str('linkpath') ?? o.linkname ?? text(h, 157, 100);
  const xattrs: Record<string, Buffer> = {};
  for (const [k, v] of pax) if (k.startsWith('SCHILY.xattr.')) xattrs[k.slice(13)] = v;
  const n = (k: string, fallback: number): number => {
    const v = str(k);
    return v === undefined ? fallback : Number(v);
  };
  return {
    path: normaliseTarPath(rawPath),
    type,
    mode: num(h, 100, 8) & 0o7777,
    uid: n('uid', num(h, 108, 8)),
    gid: n('gid', num(h, 116, 8)),
    size: n('size', num(h, 124, 12)),
    mtime: n('mtime', num(h, 136, 12)),
    linkname: type === 'hardlink' ? normaliseTarPath(rawLink) : rawLink,
    devmajor: num(h, 329, 8),
    devminor: num(h, 337, 8),
    xattrs,
  };
}
