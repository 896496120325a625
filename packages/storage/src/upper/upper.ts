/**
 * `Upper`: the writable top of an image stack, one per sandbox.
 *
 * On disk an upper is a directory with two files:
 * - `data`: block contents, appended (and, under the rule below, rewritten
 *   in place);
 * - `journal`: a header and then fixed-size records, one per write, zero
 *   or flush (`upper-journal.ts`). The in-memory {@link BlockTable} is the
 *   journal replayed.
 *
 * Durability. A write stores its data, then appends its record; neither is
 * synced. `flush()` syncs the data file, appends a flush marker and syncs
 * the journal, so everything acknowledged before the flush survives a
 * `kill -9` or a power cut; recovery (`upper-recovery.ts`) drops only what
 * was never flushed and fails its check.
 *
 * Rewrites. A block whose data was written before the last flush, and not
 * yet rewritten since, is overwritten in place; otherwise its new contents
 * are appended. So between two flushes each data location is written at
 * most once, which keeps recovery's per-record data check sound and bounds
 * the data file's growth by what is written between flushes.
 *
 * Concurrency contract (the image device guarantees it): calls that touch
 * overlapping blocks never run at the same time, and `flush()`/`close()`
 * never run while a write or zero is in flight. Reads may run at any time.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import { publish, STORAGE_CHANNELS } from '../events.js';
import { closeFd, fsError, openFd, readFull, syncData, syncDir, writeFull } from '../file-io.js';
import type { Segment, StackLevel } from '../image/stack-level.js';
import { BlockTable, ZERO, type BlockRun } from './block-table.js';
import { recoverJournal } from './upper-recovery.js';
import {
  JOURNAL_HEADER_SIZE,
  RECORD_SIZE,
  RecordKind,
  decodeJournalHeader,
  encodeJournalHeader,
  encodeRecords,
  type JournalHeader,
  type JournalRecord,
} from './upper-journal.js';

/** How to open an upper directory. */
export type UpperMode = 'create' | 'open' | 'open-or-create';

/** Options of {@link Upper.open}. */
export interface UpperOpenOptions {
  readonly dir: string;
  /** @default 'open-or-create' */
  readonly mode?: UpperMode;
  /** What the upper must have been made for (checked on open). */
  readonly header: JournalHeader;
}

interface Piece {
  readonly block: number;
  readonly count: number;
  readonly src: number;
  readonly dataOffset: number;
}

/** The writable top level of an image stack. */
export class Upper implements StackLevel {
  readonly blockSize: number;
  readonly #table: BlockTable;
  readonly #dataFd: number;
  #journalFd: number;
  #dataTail: number;
  #journalTail: number;
  #flushedDataTail: number;
  readonly #rewritten = new Set<number>();
  #dirty = false;
  #closed = false;

  private constructor(fds: { data: number; journal: number }, table: BlockTable, tails: Tails) {
    this.blockSize = tails.blockSize;
    this.#dataFd = fds.data;
    this.#journalFd = fds.journal;
    this.#table = table;
    this.#dataTail = tails.data;
    this.#journalTail = tails.journal;
    this.#flushedDataTail = tails.data;
  }

  /**
   * Opens (replaying the journal) or creates the upper in `dir`.
   * @throws {AenvError} `STORAGE_UPPER_EXISTS`, `STORAGE_UPPER_NOT_FOUND`,
   *   `STORAGE_UPPER_MISMATCH` (made for another stack), `STORAGE_UPPER_CORRUPT`.
   */
  static async open(options: UpperOpenOptions): Promise<Upper> {
    const mode = options.mode ?? 'open-or-create';
    const exists = existsSync(join(options.dir, 'journal'));
    if (exists && mode === 'create') {
      throw new AenvError('STORAGE_UPPER_EXISTS', `an upper exists in ${options.dir}`, {
        fields: { path: options.dir },
      });
    }
    if (!exists && mode === 'open') {
      throw new AenvError('STORAGE_UPPER_NOT_FOUND', `no upper in ${options.dir}`, {
        fields: { path: options.dir },
      });
    }
    return exists ? Upper.#reopen(options) : Upper.#create(options);
  }

  static async #create(options: UpperOpenOptions): Promise<Upper> {
    const { dir, header } = options;
    try {
      await mkdir(dir, { recursive: true });
      const data = await open(join(dir, 'data'), 'w+');
      await data.close();
      const tmp = join(dir, 'journal.tmp');
      const fh = await open(tmp, 'w');
      await fh.writeFile(encodeJournalHeader(header));
      await fh.datasync();
      await fh.close();
      await rename(tmp, join(dir, 'journal'));
      await syncDir(dir);
    } catch (err) {
      throw fsError(err, `creating upper in ${dir}`);
    }
    return Upper.#openFiles(dir, new BlockTable(header.blockSize), {
      blockSize: header.blockSize,
      data: 0,
      journal: JOURNAL_HEADER_SIZE,
    });
  }

  static async #reopen(options: UpperOpenOptions): Promise<Upper> {
    const { dir, header } = options;
    const journalPath = join(dir, 'journal');
    const bytes = await readFile(journalPath).catch((err: unknown) => {
      throw fsError(err, `reading ${journalPath}`);
    });
    const found = decodeJournalHeader(bytes, journalPath);
    checkHeader(found, header, dir);
    const upper = await Upper.#openFiles(dir, new BlockTable(header.blockSize), {
      blockSize: header.blockSize,
      data: 0,
      journal: JOURNAL_HEADER_SIZE,
    });
    try {
      await upper.#recover(bytes, dir);
    } catch (err) {
      await upper.close();
      throw fsError(err, `recovering upper in ${dir}`);
    }
    return upper;
  }

  static async #openFiles(dir: string, table: BlockTable, tails: Tails): Promise<Upper> {
    const data = await openFd(join(dir, 'data'), 'r+');
    const journal = await openFd(join(dir, 'journal'), 'r+').catch(async (err: unknown) => {
      await closeFd(data);
      throw err;
    });
    return new Upper({ data, journal }, table, tails);
  }

  async #recover(journal: Buffer, dir: string): Promise<void> {
    const r = await recoverJournal(journal, this.#dataFd, this.blockSize);
    const keptBytes = JOURNAL_HEADER_SIZE + r.records * RECORD_SIZE;
    this.#replaceTable(r.table);
    this.#dataTail = r.dataTail;
    this.#journalTail = keptBytes;
    if (journal.length > keptBytes) await truncate(join(dir, 'journal'), keptBytes);
    await truncate(join(dir, 'data'), r.dataTail);
    if (!r.endsFlushed && r.records > 0) {
      this.#dirty = true;
      await this.flush();
    }
    this.#flushedDataTail = this.#dataTail;
    if (r.records > 2 * runCount(r.table) + 1024) await this.#compact(dir);
    publish(STORAGE_CHANNELS.upperRecovered, {
      path: dir,
      records: r.records,
      dropped: r.dropped,
      [LOG_FIELDS.bytes]: r.dataTail,
    });
  }

  #replaceTable(table: BlockTable): void {
    for (const run of table.runs()) this.#table.set(run.block, run.count, run.value);
  }

  /** Rewrites the journal as one record per run, then a flush marker. */
  async #compact(dir: string): Promise<void> {
    const records: JournalRecord[] = [];
    for (const run of this.#table.runs()) records.push(runRecord(run));
    records.push({ kind: 3, block: 0, count: 0, dataOffset: this.#dataTail, dataCrc: 0 });
    const tmp = join(dir, 'journal.tmp');
    const header = (await readFile(join(dir, 'journal'))).subarray(0, JOURNAL_HEADER_SIZE);
    const fh = await open(tmp, 'w');
    await fh.writeFile(Buffer.concat([header, encodeRecords(records)]));
    await fh.datasync();
    await fh.close();
    await rename(tmp, join(dir, 'journal'));
    await syncDir(dir);
    const fresh = await openFd(join(dir, 'journal'), 'r+');
    await closeFd(this.#journalFd);
    this.#journalFd = fresh;
    this.#journalTail = JOURNAL_HEADER_SIZE + records.length * RECORD_SIZE;
  }

  /** Bytes of the data file in use. */
  get dataBytes(): number {
    return this.#dataTail;
  }

  /** Blocks this upper holds (data or zero). */
  get mappedBlocks(): number {
    return this.#table.mappedBlocks;
  }

  /** Whether writes happened since the last flush. */
  get dirty(): boolean {
    return this.#dirty;
  }

  resolve(block: number, count: number): Segment[] {
    return this.#table.resolve(block, count);
  }

  readData(target: Uint8Array, ref: number): Promise<void> {
    this.#assertOpen();
    return readFull(this.#dataFd, target, ref);
  }

  /** Every run of blocks this upper holds, in block order (for sealing). */
  runs(): Generator<BlockRun> {
    return this.#table.runs();
  }

  /** Writes whole blocks: `data.length` is a multiple of the block size. */
  async writeBlocks(block: number, data: Uint8Array): Promise<void> {
    this.#assertOpen();
    const pieces = this.#plan(block, data.length / this.blockSize);
    await Promise.all(
      pieces.map((p) =>
        writeFull(
          this.#dataFd,
          data.subarray(p.src, p.src + p.count * this.blockSize),
          p.dataOffset,
        ),
      ),
    );
    const records = pieces.map((p): JournalRecord => {
      const bytes = data.subarray(p.src, p.src + p.count * this.blockSize);
      return {
        kind: 1,
        block: p.block,
        count: p.count,
        dataOffset: p.dataOffset,
        dataCrc: crc32(bytes),
      };
    });
    for (const p of pieces) this.#table.set(p.block, p.count, p.dataOffset);
    await this.#append(records);
  }

  /** Records `count` blocks from `block` as zeros. */
  async zeroBlocks(block: number, count: number): Promise<void> {
    this.#assertOpen();
    this.#table.set(block, count, ZERO);
    await this.#append([{ kind: 2, block, count, dataOffset: 0, dataCrc: 0 }]);
  }

  /** Makes every completed write durable (see the module comment). */
  async flush(): Promise<void> {
    this.#assertOpen();
    if (!this.#dirty) return;
    this.#dirty = false;
    try {
      await syncData(this.#dataFd);
      const marker: JournalRecord = {
        kind: 3,
        block: 0,
        count: 0,
        dataOffset: this.#dataTail,
        dataCrc: 0,
      };
      await this.#append([marker], false);
      await syncData(this.#journalFd);
    } catch (err) {
      this.#dirty = true;
      throw err;
    }
    this.#flushedDataTail = this.#dataTail;
    this.#rewritten.clear();
  }

  /** Closes the files without flushing. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([closeFd(this.#dataFd), closeFd(this.#journalFd)]);
  }

  #plan(block: number, count: number): Piece[] {
    const bs = this.blockSize;
    const pieces: Piece[] = [];
    let i = 0;
    while (i < count) {
      const start = i;
      const at = this.#table.get(block + i);
      if (this.#rewritable(block + i, at)) {
        i += 1;
        while (i < count && this.#table.get(block + i) === at + (i - start) * bs) {
          if (!this.#rewritable(block + i, at + (i - start) * bs)) break;
          i += 1;
        }
        for (let k = start; k < i; k++) this.#rewritten.add(block + k);
        pieces.push({ block: block + start, count: i - start, src: start * bs, dataOffset: at });
      } else {
        i += 1;
        while (i < count && !this.#rewritable(block + i, this.#table.get(block + i))) i += 1;
        pieces.push({
          block: block + start,
          count: i - start,
          src: start * bs,
          dataOffset: this.#dataTail,
        });
        this.#dataTail += (i - start) * bs;
      }
    }
    return pieces;
  }

  #rewritable(block: number, at: number): boolean {
    return at >= 0 && at + this.blockSize <= this.#flushedDataTail && !this.#rewritten.has(block);
  }

  async #append(records: JournalRecord[], dirty = true): Promise<void> {
    const position = this.#journalTail;
    this.#journalTail += records.length * RECORD_SIZE;
    if (dirty) this.#dirty = true;
    await writeFull(this.#journalFd, encodeRecords(records), position);
  }

  #assertOpen(): void {
    if (this.#closed) throw new AenvError('STORAGE_CLOSED', 'upper is closed');
  }
}

interface Tails {
  readonly blockSize: number;
  readonly data: number;
  readonly journal: number;
}

function checkHeader(found: JournalHeader, want: JournalHeader, dir: string): void {
  const same =
    found.blockSize === want.blockSize &&
    found.virtualSize === want.virtualSize &&
    found.stackHash === want.stackHash;
  if (!same) {
    throw new AenvError('STORAGE_UPPER_MISMATCH', `upper in ${dir} was made for another stack`, {
      fields: { path: dir, virtualSize: found.virtualSize, blockSize: found.blockSize },
    });
  }
}

function runRecord(run: BlockRun): JournalRecord {
  if (run.value === ZERO) {
    return {
      kind: RecordKind.zero,
      block: run.block,
      count: run.count,
      dataOffset: 0,
      dataCrc: 0,
    };
  }
  return { kind: 1, block: run.block, count: run.count, dataOffset: run.value, dataCrc: 0 };
}

function runCount(table: BlockTable): number {
  let n = 0;
  for (const _ of table.runs()) n += 1;
  return n;
}

/** Deletes an upper directory and everything in it. Idempotent. */
export async function deleteUpper(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
