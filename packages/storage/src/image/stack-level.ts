/**
 * One level of an image stack (the writable upper, or an immutable layer)
 * as the image device sees it.
 *
 * A level answers "what do you hold for blocks `[block, block + count)`?"
 * with segments covering the range exactly, in order. Each segment is
 * either data the level holds, zeros it recorded (a trim or write-zeroes,
 * which hides every level below), or `absent`: the level holds nothing
 * there and the caller must ask the next level down. `absent` is a typed
 * answer, never silent zeros; only the bottom of the stack turns what no
 * level holds into zeros.
 *
 * @module
 */

/** Blocks the level holds data for; `ref` is the level's address of the first one. */
export interface DataSegment {
  readonly kind: 'data';
  readonly block: number;
  readonly count: number;
  readonly ref: number;
}

/** Blocks the level recorded as zeros. */
export interface ZeroSegment {
  readonly kind: 'zero';
  readonly block: number;
  readonly count: number;
}

/** Blocks the level does not hold: resolve them in the level below. */
export interface AbsentSegment {
  readonly kind: 'absent';
  readonly block: number;
  readonly count: number;
}

/** What one level holds for a run of blocks. */
export type Segment = DataSegment | ZeroSegment | AbsentSegment;

/** One level of a stack. */
export interface StackLevel {
  /** Segments covering `[block, block + count)` exactly, in ascending order. */
  resolve(block: number, count: number): Segment[];
  /**
   * Fills `target` with the level's data starting at address `ref` (a data
   * segment's `ref` plus a byte offset into that segment).
   */
  readData(target: Uint8Array, ref: number): Promise<void>;
}
