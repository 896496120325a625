// A small seeded PRNG (mulberry32) so randomized tests are reproducible:
// a failure prints its seed; AENV_TEST_SEED=<n> replays it.

export class Prng {
  #state: number;
  readonly seed: number;

  constructor(seed = Number(process.env.AENV_TEST_SEED ?? Date.now() % 2 ** 31)) {
    this.seed = seed;
    this.#state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo));
  }

  /** `n` pseudo-random bytes. */
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.int(0, 256);
    return b;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length)] as T;
  }
}
