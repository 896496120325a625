/**
 * The RAM diff file (`memory.diff` in a snapshot directory) and how its page
 * runs are found: pure code, tested beside.
 *
 * A diff holds the guest pages that differ from a base memory file, as runs
 * of consecutive 4 KiB pages (docs/snapshots.md, "RAM diff format"):
 *
 * ```
 * 0   magic "AENVRAMD" (8 bytes)
 * 8   u32 version (1)         12  u32 page size (4096)
 * 16  u64 guest RAM bytes     24  u32 run count   28  u32 reserved (0)
 * 32  runs: { u64 first page, u32 page count, u32 reserved } × run count
 * ..  page data, run after run, no gaps
 * ```
 * All integers little-endian. Runs are sorted, disjoint and non-empty.
 *
 * Which pages go in: a restored VM maps its base file privately, so a page
 * the guest wrote is an anonymous copy in QEMU's address space. The kernel's
 * `/proc/<pid>/pagemap` says so per page (bit 63 present, 62 swapped, 61
 * file-backed or shared): present and not file-backed, or swapped, is
 * dirty; anything else still reads the base file.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Page size of x86-64 guests and hosts. */
export const PAGE_SIZE = 4096;
/** First bytes of every diff file. */
export const RAM_DIFF_MAGIC = 'AENVRAMD';
/** The format this code writes and reads. */
export const RAM_DIFF_VERSION = 1;
const HEADER_BYTES = 32;
const RUN_BYTES = 16;

/** Consecutive pages: `[first, first + count)`. */
export interface PageRun {
  readonly first: number;
  readonly count: number;
}

/** A decoded diff header. */
export interface RamDiffHeader {
  readonly ramBytes: number;
  readonly runs: readonly PageRun[];
  /** Where the page data starts. */
  readonly dataOffset: number;
  /** Pages in all runs. */
  readonly pages: number;
}

const PRESENT = 1 << 31;
const SWAPPED = 1 << 30;
const FILE_OR_SHARED = 1 << 29;

/** Whether one pagemap entry (its high 32 bits) is a page the guest changed. */
export function isDirtyEntry(high: number): boolean {
  const present = (high & PRESENT) !== 0;
  const file = (high & FILE_OR_SHARED) !== 0;
  return (present && !file) || (high & SWAPPED) !== 0;
}

/**
 * Appends to `runs` the dirty pages of a slice of pagemap (8 bytes per
 * page, the first describing page `firstPage`), merging with the last run
 * when they touch.
 */
export function collectDirtyRuns(pagemap: Buffer, firstPage: number, runs: PageRun[]): void {
  const entries = Math.floor(pagemap.length / 8);
  let start = -1;
  const close = (end: number): void => {
    const last = runs.at(-1);
    if (last !== undefined && last.first + last.count === start) {
      runs[runs.length - 1] = { first: last.first, count: last.count + (end - start) };
    } else {
      runs.push({ first: start, count: end - start });
    }
    start = -1;
  };
  for (let i = 0; i < entries; i++) {
    const dirty = isDirtyEntry(pagemap.readUInt32LE(i * 8 + 4));
    if (dirty && start < 0) start = firstPage + i;
    else if (!dirty && start >= 0) close(firstPage + i);
  }
  if (start >= 0) close(firstPage + entries);
}

/** Splits runs so none is longer than `maxPages` (bounded I/O buffers). */
export function* chunkRuns(runs: readonly PageRun[], maxPages: number): Generator<PageRun> {
  for (const run of runs) {
    for (let first = run.first; first < run.first + run.count; first += maxPages) {
      yield { first, count: Math.min(maxPages, run.first + run.count - first) };
    }
  }
}

/** The header and run table of a diff. */
export function encodeRamDiffHeader(ramBytes: number, runs: readonly PageRun[]): Buffer {
  const buf = Buffer.alloc(HEADER_BYTES + runs.length * RUN_BYTES);
  buf.write(RAM_DIFF_MAGIC, 0, 'latin1');
  buf.writeUInt32LE(RAM_DIFF_VERSION, 8);
  buf.writeUInt32LE(PAGE_SIZE, 12);
  buf.writeBigUInt64LE(BigInt(ramBytes), 16);
  buf.writeUInt32LE(runs.length, 24);
  runs.forEach((run, i) => {
    buf.writeBigUInt64LE(BigInt(run.first), HEADER_BYTES + i * RUN_BYTES);
    buf.writeUInt32LE(run.count, HEADER_BYTES + i * RUN_BYTES + 8);
  });
  return buf;
}

function corrupt(why: string): AenvError {
  return new AenvError('VMM_SNAPSHOT_INVALID', `RAM diff: ${why}`);
}

/** Bytes of the fixed header, to read before the run table. */
export const RAM_DIFF_FIXED_HEADER = HEADER_BYTES;

/** The run count of a fixed header, to size the second read. */
export function ramDiffRunCount(fixed: Buffer): number {
  if (fixed.length < HEADER_BYTES || fixed.toString('latin1', 0, 8) !== RAM_DIFF_MAGIC)
    throw corrupt('not a RAM diff file');
  return fixed.readUInt32LE(24);
}

/**
 * Decodes and checks a header with its whole run table.
 * @throws {AenvError} `VMM_SNAPSHOT_INVALID` for another magic, version or
 *   page size, or runs that are unsorted, overlapping or outside the RAM.
 */
export function decodeRamDiffHeader(buf: Buffer): RamDiffHeader {
  const count = ramDiffRunCount(buf);
  if (buf.readUInt32LE(8) !== RAM_DIFF_VERSION)
    throw corrupt(`version ${buf.readUInt32LE(8)} is not ${RAM_DIFF_VERSION}`);
  if (buf.readUInt32LE(12) !== PAGE_SIZE) throw corrupt(`page size is not ${PAGE_SIZE}`);
  const ramBytes = Number(buf.readBigUInt64LE(16));
  const dataOffset = HEADER_BYTES + count * RUN_BYTES;
  if (buf.length < dataOffset) throw corrupt('the run table is truncated');
  const runs: PageRun[] = [];
  let next = 0;
  let pages = 0;
  for (let i = 0; i < count; i++) {
    const first = Number(buf.readBigUInt64LE(HEADER_BYTES + i * RUN_BYTES));
    const runPages = buf.readUInt32LE(HEADER_BYTES + i * RUN_BYTES + 8);
    if (runPages === 0 || first < next || (first + runPages) * PAGE_SIZE > ramBytes)
      throw corrupt(`run ${i} (${first}+${runPages}) is empty, unsorted or outside the RAM`);
    runs.push({ first, count: runPages });
    next = first + runPages;
    pages += runPages;
  }
  return { ramBytes, runs, dataOffset, pages };
}
