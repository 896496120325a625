/**
 * Replaying an upper's journal after a restart or a crash.
 *
 * Records are read in order up to the first invalid one (torn, zeroed, or
 * past the end): the journal is a log and nothing after a gap is trusted.
 * Records before the last flush marker were made durable by an acknowledged
 * flush (data synced before the marker was written), so they are taken as
 * they are. Records after it were never acknowledged as durable; each data
 * record among them is checked against the CRC-32 of the data it points to,
 * and the journal is cut at the first one that fails, so a block never
 * reads as garbage: it reads as its flushed value or a later written one.
 * (An upper never writes a data location twice between two flushes, which
 * is what makes that check sound; see `upper.ts`.)
 *
 * @module
 */
import { crc32 } from 'node:zlib';
import { readFull } from '../file-io.js';
import { BlockTable, ZERO } from './block-table.js';
import { JOURNAL_HEADER_SIZE, RECORD_SIZE, RecordKind, decodeRecord } from './upper-journal.js';
import type { JournalRecord } from './upper-journal.js';

/** What replaying a journal produced. */
export interface Recovered {
  readonly table: BlockTable;
  /** Records kept. */
  readonly records: number;
  /** Records dropped (after a gap, or failing their data check). */
  readonly dropped: number;
  /** Whether the kept records end with a flush marker. */
  readonly endsFlushed: boolean;
  /** End of the data the kept records point to. */
  readonly dataTail: number;
}

/** Replays `journal` (the whole file) against the data file `dataFd`. */
export async function recoverJournal(
  journal: Buffer,
  dataFd: number,
  blockSize: number,
): Promise<Recovered> {
  const records: JournalRecord[] = [];
  let lastFlush = -1;
  for (let off = JOURNAL_HEADER_SIZE; ; off += RECORD_SIZE) {
    const r = decodeRecord(journal, off);
    if (r === undefined) break;
    if (r.kind === RecordKind.flush) lastFlush = records.length;
    records.push(r);
  }
  const parsedBytes = JOURNAL_HEADER_SIZE + records.length * RECORD_SIZE;
  const trailing = Math.floor((journal.length - parsedBytes) / RECORD_SIZE);
  let keep = records.length;
  for (let i = lastFlush + 1; i < records.length; i++) {
    const r = records[i] as JournalRecord;
    if (r.kind === RecordKind.data && !(await dataMatches(dataFd, r, blockSize))) {
      keep = i;
      break;
    }
  }
  const table = new BlockTable(blockSize);
  let dataTail = 0;
  for (let i = 0; i < keep; i++) {
    const r = records[i] as JournalRecord;
    if (r.kind === RecordKind.data) {
      table.set(r.block, r.count, r.dataOffset);
      dataTail = Math.max(dataTail, r.dataOffset + r.count * blockSize);
    } else if (r.kind === RecordKind.zero) {
      table.set(r.block, r.count, ZERO);
    }
  }
  return {
    table,
    records: keep,
    dropped: records.length - keep + Math.max(0, trailing),
    endsFlushed: keep > 0 && keep - 1 === lastFlush,
    dataTail,
  };
}

async function dataMatches(fd: number, r: JournalRecord, blockSize: number): Promise<boolean> {
  const buf = Buffer.allocUnsafe(r.count * blockSize);
  try {
    await readFull(fd, buf, r.dataOffset);
  } catch {
    return false;
  }
  return crc32(buf) === r.dataCrc;
}
