/**
 * `BlockTable`: the upper's in-memory index, block number → where the
 * block's current contents are.
 *
 * Values: {@link ABSENT} (never written in this upper), {@link ZERO}
 * (trimmed or zeroed), or a byte offset into the upper's data file.
 *
 * Storage is a sparse table of pages of 512 blocks (a `Float64Array` each,
 * exact for offsets below 2^53), created when a block in them is first
 * written: memory grows with the part of the disk a sandbox touched (4 KiB
 * per touched 2 MiB at 4 KiB blocks), never with the disk size.
 *
 * @module
 */
import type { Segment } from '../image/stack-level.js';

/** A block never written in this upper. */
export const ABSENT = -1;
/** A block trimmed or zeroed in this upper. */
export const ZERO = -2;

const PAGE_SHIFT = 9;
const PAGE_BLOCKS = 1 << PAGE_SHIFT;
const PAGE_MASK = PAGE_BLOCKS - 1;

/** A maximal run of blocks with contiguous contents. */
export interface BlockRun {
  readonly block: number;
  readonly count: number;
  /** {@link ZERO}, or the data offset of `block`. */
  readonly value: number;
}

/** Sparse block → location table. */
export class BlockTable {
  readonly #pages = new Map<number, Float64Array>();
  readonly #blockSize: number;
  #mapped = 0;

  constructor(blockSize: number) {
    this.#blockSize = blockSize;
  }

  /** Number of blocks that are not {@link ABSENT}. */
  get mappedBlocks(): number {
    return this.#mapped;
  }

  /** The value of one block. */
  get(block: number): number {
    const page = this.#pages.get(block >>> PAGE_SHIFT);
    return page === undefined ? ABSENT : (page[block & PAGE_MASK] as number);
  }

  /**
   * Sets `count` blocks from `block`: to {@link ZERO}, or (for an offset
   * `value >= 0`) to consecutive data offsets starting at `value`.
   */
  set(block: number, count: number, value: number): void {
    const step = value >= 0 ? this.#blockSize : 0;
    for (let i = 0; i < count; i++) {
      const b = block + i;
      const key = b >>> PAGE_SHIFT;
      let page = this.#pages.get(key);
      if (page === undefined) {
        page = new Float64Array(PAGE_BLOCKS).fill(ABSENT);
        this.#pages.set(key, page);
      }
      const slot = b & PAGE_MASK;
      if (page[slot] === ABSENT) this.#mapped += 1;
      page[slot] = value + i * step;
    }
  }

  /** Segments for `[block, block + count)`; `ref` of data segments is a data offset. */
  resolve(block: number, count: number): Segment[] {
    const out: Segment[] = [];
    let runStart = block;
    let runValue = this.get(block);
    for (let b = block + 1; b <= block + count; b++) {
      const v = b < block + count ? this.get(b) : Number.NaN;
      if (continues(runValue, v, b - runStart, this.#blockSize)) continue;
      out.push(toSegment(runStart, b - runStart, runValue));
      runStart = b;
      runValue = v;
    }
    return out;
  }

  /** Every maximal run of non-absent blocks, in block order. */
  *runs(): Generator<BlockRun> {
    const keys = [...this.#pages.keys()].sort((a, b) => a - b);
    let open: { block: number; count: number; value: number } | undefined;
    for (const key of keys) {
      const page = this.#pages.get(key) as Float64Array;
      for (let i = 0; i < PAGE_BLOCKS; i++) {
        const v = page[i] as number;
        const b = key * PAGE_BLOCKS + i;
        if (open !== undefined && open.block + open.count === b) {
          if (continues(open.value, v, open.count, this.#blockSize)) {
            open.count += 1;
            continue;
          }
        }
        if (open !== undefined) yield open;
        open = v === ABSENT ? undefined : { block: b, count: 1, value: v };
      }
    }
    if (open !== undefined) yield open;
  }
}

function continues(runValue: number, v: number, runLength: number, blockSize: number): boolean {
  if (runValue < 0) return v === runValue;
  return v === runValue + runLength * blockSize;
}

function toSegment(block: number, count: number, value: number): Segment {
  if (value === ABSENT) return { kind: 'absent', block, count };
  if (value === ZERO) return { kind: 'zero', block, count };
  return { kind: 'data', block, count, ref: value };
}
