/**
 * A small seeded generator for property and fuzz tests (test support that
 * every package's suites share, without a dependency): a PRNG (mulberry32)
 * with helpers for the inputs a network surface meets: hostile strings,
 * random JSON, mutations of valid JSON, byte garbage. Not for secrets: the
 * sequence is fully determined by the seed, which is the point — a failing
 * run prints its seed and `AENV_FUZZ_SEED=<seed>` replays it.
 *
 * @module
 */

/** Strings that have broken parsers before: empty, huge, control bytes, paths, encodings. */
const NASTY_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  '\r\n',
  '..',
  '../../../../etc/passwd',
  '%00',
  '%zz',
  '%2e%2e%2f',
  '/',
  '//',
  '~',
  '\uD800',
  '\uFFFF',
  '😀',
  'null',
  'true',
  '-1',
  '1e309',
  '0x10',
  'NaN',
  '{}',
  '[]',
  '__proto__',
  'constructor',
  'a'.repeat(4096),
];

const NASTY_NUMBERS: readonly number[] = [
  0,
  -1,
  1,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  -(2 ** 53),
  1e308,
  0.5,
  -0,
  Number.MAX_SAFE_INTEGER,
];

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** A deterministic random source; see the module comment. */
export class FuzzRandom {
  readonly seed: number;
  #state: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#state = this.seed;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of `items` (which must not be empty). */
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length)] as T;
  }

  /** `n` random bytes. */
  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.int(0, 256);
    return out;
  }

  /** A short string: printable, unicode, control characters, or a known-nasty one. */
  string(maxLength = 24): string {
    if (this.chance(0.3)) return this.pick(NASTY_STRINGS);
    const length = this.int(0, maxLength + 1);
    let out = '';
    for (let i = 0; i < length; i++) {
      const kind = this.int(0, 10);
      const code =
        kind < 7 ? this.int(0x20, 0x7f) : kind < 9 ? this.int(0, 0x20) : this.int(0x80, 0xd7ff);
      out += String.fromCharCode(code);
    }
    return out;
  }

  /** A number, often a boundary value. */
  number(): number {
    if (this.chance(0.5)) return this.pick(NASTY_NUMBERS);
    return this.chance(0.5) ? this.int(-1000, 100_000) : (this.next() - 0.5) * 1e6;
  }

  /** A random JSON value, at most `depth` levels deep. */
  json(depth = 3): JsonValue {
    const kind = this.int(0, depth > 0 ? 7 : 5);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.number();
      case 3:
      case 4:
        return this.string();
      case 5:
        return Array.from({ length: this.int(0, 4) }, () => this.json(depth - 1));
      default: {
        const out: Record<string, JsonValue> = {};
        for (let i = this.int(0, 4); i > 0; i--) out[this.string(12)] = this.json(depth - 1);
        return out;
      }
    }
  }

  /**
   * A variation of a valid JSON object: a field dropped, retyped or set to
   * a boundary value, or an unknown field added; nested objects recursively.
   */
  mutate(value: Readonly<Record<string, JsonValue>>): Record<string, JsonValue> {
    const out: Record<string, JsonValue> = { ...value };
    const keys = Object.keys(out);
    for (let n = this.int(1, 4); n > 0; n--) {
      const key = keys.length > 0 && this.chance(0.8) ? this.pick(keys) : this.string(12);
      const current = out[key];
      const op = this.int(0, 4);
      if (op === 0) delete out[key];
      else if (op === 1 && isObject(current)) out[key] = this.mutate(current);
      else if (op === 2 && typeof current === 'string') out[key] = this.string(64);
      else out[key] = this.json(2);
    }
    return out;
  }

  /** JSON text that is not quite JSON: truncated, doubled, garbage-prefixed, deep. */
  brokenJson(valid: string): string {
    switch (this.int(0, 5)) {
      case 0:
        return valid.slice(0, this.int(0, valid.length));
      case 1:
        return valid + valid;
      case 2:
        return this.bytes(this.int(1, 64)).toString('latin1') + valid;
      case 3:
        return '['.repeat(this.int(1, 20_000));
      default:
        return valid.replace(/[:,]/, this.pick([';', '', '::', ' ']));
    }
  }
}

function isObject(v: JsonValue | undefined): v is Record<string, JsonValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The seed of this run: `AENV_FUZZ_SEED`, else a fresh one. */
export function fuzzSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.AENV_FUZZ_SEED;
  if (given !== undefined && /^\d+$/.test(given)) return Number(given) >>> 0;
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}

/** How many cases to run: `AENV_FUZZ_ITERATIONS`, else `ciDefault` (sized for CI). */
export function fuzzIterations(ciDefault: number, env: NodeJS.ProcessEnv = process.env): number {
  const given = env.AENV_FUZZ_ITERATIONS;
  return given !== undefined && /^\d+$/.test(given) ? Number(given) : ciDefault;
}

/** Bounds of one fuzz run. */
export interface FuzzRunOptions {
  /** Cases to run (see {@link fuzzIterations}). */
  readonly iterations: number;
  /**
   * Stop early after this long, so a slow machine keeps a suite's time
   * bounded. @default 40000, or no limit when `AENV_FUZZ_ITERATIONS` is set
   */
  readonly budgetMs?: number;
  /** The seed; @default {@link fuzzSeed}() */
  readonly seed?: number;
}

/** What a fuzz run did. */
export interface FuzzRunResult {
  readonly seed: number;
  readonly cases: number;
}

/**
 * Runs `body` once per case with one shared {@link FuzzRandom}. A failure
 * is rethrown with the seed and case number in its message (the original
 * as `cause`) so that `AENV_FUZZ_SEED=<seed>` replays the same inputs.
 */
export async function runFuzz(
  name: string,
  options: FuzzRunOptions,
  body: (rng: FuzzRandom, index: number) => Promise<void>,
): Promise<FuzzRunResult> {
  const seed = options.seed ?? fuzzSeed();
  const rng = new FuzzRandom(seed);
  const longRun = process.env.AENV_FUZZ_ITERATIONS !== undefined;
  const deadline = Date.now() + (options.budgetMs ?? (longRun ? Infinity : 40_000));
  let i = 0;
  for (; i < options.iterations && Date.now() < deadline; i++) {
    try {
      await body(rng, i);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`${name}: case ${i} failed (replay: AENV_FUZZ_SEED=${seed}): ${why}`, {
        cause: err,
      });
    }
  }
  return { seed, cases: i };
}
