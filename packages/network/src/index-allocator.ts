/**
 * Hands out slot indices: the lowest free ones first, so a node's addresses
 * and names stay dense and a restarted node finds its slots near zero.
 * An index is taken from the moment a build starts until its slot is
 * destroyed; a slot whose teardown failed keeps its index (quarantined), so
 * a new slot never collides with its leftovers.
 *
 * @module
 */

/** A set of taken indices in `[0, capacity)`. */
export class IndexAllocator {
  readonly #capacity: number;
  readonly #taken = new Set<number>();
  #hint = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** How many indices are taken. */
  get size(): number {
    return this.#taken.size;
  }

  /** How many indices are free. */
  get free(): number {
    return this.#capacity - this.#taken.size;
  }

  /** Takes up to `count` of the lowest free indices (fewer when the range runs out). */
  take(count: number): number[] {
    const out: number[] = [];
    for (let i = this.#hint; i < this.#capacity && out.length < count; i++) {
      if (this.#taken.has(i)) continue;
      this.#taken.add(i);
      out.push(i);
    }
    this.#hint = out.length < count ? this.#capacity : (out[out.length - 1] ?? this.#hint) + 1;
    return out;
  }

  /** Marks a specific index taken (a slot adopted from a previous run). */
  reserve(index: number): void {
    this.#taken.add(index);
  }

  /** Frees an index. */
  release(index: number): void {
    this.#taken.delete(index);
    if (index < this.#hint) this.#hint = index;
  }

  /** Whether an index is taken. */
  has(index: number): boolean {
    return this.#taken.has(index);
  }
}
