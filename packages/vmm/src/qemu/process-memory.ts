/**
 * Reading and writing a running QEMU's guest RAM from outside, through
 * `/proc/<pid>/{maps,pagemap,mem}`: how a paused, restored VM's dirty pages
 * are saved into a RAM diff, and how a diff is put back into a new QEMU
 * before its device state loads (docs/snapshots.md).
 *
 * Contract: the QEMU must not run guest code meanwhile (paused, or started
 * with `-incoming defer` and not yet continued); the caller needs ptrace
 * access to it (root, or the same user). Writes through `/proc/<pid>/mem`
 * into the private mapping make private copies of those pages, so the base
 * file is never written.
 *
 * @module
 */
import { open, readFile } from 'node:fs/promises';
import { AenvError } from '@aenv/shared';
import {
  PAGE_SIZE,
  RAM_DIFF_FIXED_HEADER,
  chunkRuns,
  collectDirtyRuns,
  decodeRamDiffHeader,
  encodeRamDiffHeader,
  ramDiffRunCount,
  type PageRun,
} from './ram-diff.js';

/** Pages per I/O call (1 MiB). */
const IO_PAGES = 256;
/** Pagemap entries per read (512 KiB of pagemap = 256 MiB of RAM). */
const PAGEMAP_CHUNK = 65_536;

/** Guest RAM inside a QEMU process. */
export interface RamMapping {
  readonly pid: number;
  /** Start address of the mapping in QEMU's address space. */
  readonly address: number;
  readonly bytes: number;
}

/** What a saved diff holds. */
export interface RamDiffInfo {
  readonly pages: number;
  /** Size of the diff file. */
  readonly fileBytes: number;
}

/**
 * Finds the mapping of `file` that is `bytes` long in `/proc/<pid>/maps`.
 * @throws {AenvError} `VMM_RESTORE_FAILED` when there is none.
 */
export async function findRamMapping(
  pid: number,
  file: string,
  bytes: number,
): Promise<RamMapping> {
  const maps = await readFile(`/proc/${pid}/maps`, 'utf8');
  for (const line of maps.split('\n')) {
    // "start-end perms offset dev inode      path"
    const fields = line.split(/\s+/);
    if (fields.length < 6 || fields.slice(5).join(' ') !== file) continue;
    const [start, end] = (fields[0] ?? '').split('-').map((h) => parseInt(h, 16));
    if (start !== undefined && end !== undefined && end - start === bytes)
      return { pid, address: start, bytes };
  }
  throw new AenvError(
    'VMM_RESTORE_FAILED',
    `QEMU (pid ${pid}) has no ${bytes}-byte mapping of ${file}`,
    { fields: { 'vm.pid': pid } },
  );
}

/** The runs of pages the guest changed since the mapping was made (see ram-diff.ts). */
export async function scanDirtyRuns(ram: RamMapping): Promise<PageRun[]> {
  const pages = ram.bytes / PAGE_SIZE;
  const runs: PageRun[] = [];
  const fh = await open(`/proc/${ram.pid}/pagemap`, 'r');
  try {
    const buf = Buffer.alloc(Math.min(pages, PAGEMAP_CHUNK) * 8);
    for (let first = 0; first < pages; first += PAGEMAP_CHUNK) {
      const n = Math.min(PAGEMAP_CHUNK, pages - first);
      const pos = (ram.address / PAGE_SIZE + first) * 8;
      const { bytesRead } = await fh.read(buf, 0, n * 8, pos);
      if (bytesRead !== n * 8) throw new Error(`short pagemap read at page ${first}`);
      collectDirtyRuns(buf.subarray(0, n * 8), first, runs);
    }
  } finally {
    await fh.close();
  }
  return runs;
}

/**
 * Writes the changed pages of `ram` into a new diff file `out`.
 * @throws if the process is gone or a read comes back short.
 */
export async function saveRamDiff(ram: RamMapping, out: string): Promise<RamDiffInfo> {
  const runs = await scanDirtyRuns(ram);
  const header = encodeRamDiffHeader(ram.bytes, runs);
  const mem = await open(`/proc/${ram.pid}/mem`, 'r');
  const file = await open(out, 'wx', 0o640);
  try {
    await file.write(header, 0, header.length, 0);
    let pos = header.length;
    let pages = 0;
    const buf = Buffer.alloc(IO_PAGES * PAGE_SIZE);
    for (const chunk of chunkRuns(runs, IO_PAGES)) {
      const len = chunk.count * PAGE_SIZE;
      const { bytesRead } = await mem.read(buf, 0, len, ram.address + chunk.first * PAGE_SIZE);
      if (bytesRead !== len) throw new Error(`short read of guest page ${chunk.first}`);
      await file.write(buf, 0, len, pos);
      pos += len;
      pages += chunk.count;
    }
    return { pages, fileBytes: pos };
  } finally {
    await Promise.all([mem.close(), file.close()]);
  }
}

/**
 * Copies a diff's pages into `ram` (a QEMU that has not run the guest yet).
 * @throws {AenvError} `VMM_SNAPSHOT_INVALID` for a malformed diff or one of
 *   another RAM size.
 */
export async function applyRamDiff(ram: RamMapping, diffPath: string): Promise<number> {
  const file = await open(diffPath, 'r');
  const mem = await open(`/proc/${ram.pid}/mem`, 'r+');
  try {
    const fixed = Buffer.alloc(RAM_DIFF_FIXED_HEADER);
    await file.read(fixed, 0, fixed.length, 0);
    const full = Buffer.alloc(RAM_DIFF_FIXED_HEADER + ramDiffRunCount(fixed) * 16);
    await file.read(full, 0, full.length, 0);
    const header = decodeRamDiffHeader(full);
    if (header.ramBytes !== ram.bytes) {
      throw new AenvError(
        'VMM_SNAPSHOT_INVALID',
        `RAM diff ${diffPath} is for ${header.ramBytes} bytes of RAM, the VM has ${ram.bytes}`,
      );
    }
    let pos = header.dataOffset;
    const buf = Buffer.alloc(IO_PAGES * PAGE_SIZE);
    for (const chunk of chunkRuns(header.runs, IO_PAGES)) {
      const len = chunk.count * PAGE_SIZE;
      const { bytesRead } = await file.read(buf, 0, len, pos);
      if (bytesRead !== len)
        throw new AenvError('VMM_SNAPSHOT_INVALID', `RAM diff ${diffPath} is truncated`);
      await mem.write(buf, 0, len, ram.address + chunk.first * PAGE_SIZE);
      pos += len;
    }
    return header.pages;
  } finally {
    await Promise.all([file.close(), mem.close()]);
  }
}
