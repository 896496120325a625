import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  PAGE_SIZE,
  chunkRuns,
  collectDirtyRuns,
  decodeRamDiffHeader,
  encodeRamDiffHeader,
  isDirtyEntry,
  type PageRun,
} from './ram-diff.js';

const PRESENT = 0x8000_0000;
const SWAPPED = 0x4000_0000;
const FILE = 0x2000_0000;

/** A pagemap slice from the high words of each entry. */
function pagemap(highs: readonly number[]): Buffer {
  const buf = Buffer.alloc(highs.length * 8);
  highs.forEach((h, i) => buf.writeUInt32LE(h >>> 0, i * 8 + 4));
  return buf;
}

describe('pagemap classification', () => {
  it('counts private (anonymous) and swapped pages as changed, file pages and holes as not', () => {
    assert.equal(isDirtyEntry(PRESENT), true);
    assert.equal(isDirtyEntry(SWAPPED), true);
    assert.equal(isDirtyEntry(PRESENT | FILE), false);
    assert.equal(isDirtyEntry(0), false);
  });

  it('merges consecutive changed pages into runs, also across slices', () => {
    const runs: PageRun[] = [];
    collectDirtyRuns(pagemap([PRESENT, PRESENT, 0, PRESENT | FILE, SWAPPED]), 0, runs);
    collectDirtyRuns(pagemap([PRESENT, 0, 0, PRESENT]), 5, runs);
    assert.deepEqual(runs, [
      { first: 0, count: 2 },
      { first: 4, count: 2 },
      { first: 8, count: 1 },
    ]);
  });

  it('splits long runs for bounded I/O', () => {
    assert.deepEqual(
      [
        ...chunkRuns(
          [
            { first: 10, count: 5 },
            { first: 20, count: 2 },
          ],
          2,
        ),
      ],
      [
        { first: 10, count: 2 },
        { first: 12, count: 2 },
        { first: 14, count: 1 },
        { first: 20, count: 2 },
      ],
    );
  });
});

describe('RAM diff header', () => {
  const runs = [
    { first: 0, count: 3 },
    { first: 100, count: 1 },
  ];

  it('round-trips with the data offset after the run table', () => {
    const buf = encodeRamDiffHeader(1 << 20, runs);
    assert.equal(buf.toString('latin1', 0, 8), 'AENVRAMD');
    const h = decodeRamDiffHeader(buf);
    assert.deepEqual(h, { ramBytes: 1 << 20, runs, dataOffset: 32 + 2 * 16, pages: 4 });
  });

  it('refuses another magic, a truncated table and runs outside the RAM or out of order', () => {
    const invalid = (buf: Buffer, re: RegExp): void =>
      assert.throws(
        () => decodeRamDiffHeader(buf),
        (e: Error & { code?: string }) => e.code === 'VMM_SNAPSHOT_INVALID' && re.test(e.message),
      );
    invalid(Buffer.alloc(64), /not a RAM diff/);
    invalid(encodeRamDiffHeader(1 << 20, runs).subarray(0, 40), /truncated/);
    invalid(encodeRamDiffHeader(100 * PAGE_SIZE, runs), /outside the RAM/);
    invalid(encodeRamDiffHeader(1 << 20, [...runs].reverse()), /unsorted/);
    const version = encodeRamDiffHeader(1 << 20, runs);
    version.writeUInt32LE(2, 8);
    invalid(version, /version 2/);
  });
});
