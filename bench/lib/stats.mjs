/**
 * Summary statistics of benchmark samples: nearest-rank percentiles (the
 * same definition in every benchmark, so p99 of 10 samples is the largest
 * one, never an interpolation) and ratios that say "not measured" instead
 * of dividing by nothing.
 *
 * @module
 */

/**
 * The `p`-th percentile (0-100) of `samples` by the nearest-rank method,
 * or NaN when there are none.
 * @param {readonly number[]} samples
 * @param {number} p
 * @returns {number}
 */
export function percentile(samples, p) {
  const xs = samples.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * xs.length);
  return xs[Math.min(xs.length - 1, Math.max(0, rank - 1))];
}

/**
 * @typedef {object} Summary
 * @property {number} n finite samples
 * @property {number} min
 * @property {number} p50
 * @property {number} p90
 * @property {number} p99
 * @property {number} max
 * @property {number} mean
 */

/**
 * n, min, p50, p90, p99, max and mean of `samples` (non-finite ones are
 * left out; all NaN when none is left).
 * @param {readonly number[]} samples
 * @returns {Summary}
 */
export function summarize(samples) {
  const xs = samples.filter((x) => Number.isFinite(x));
  const mean = xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    n: xs.length,
    min: xs.length === 0 ? NaN : Math.min(...xs),
    p50: percentile(xs, 50),
    p90: percentile(xs, 90),
    p99: percentile(xs, 99),
    max: xs.length === 0 ? NaN : Math.max(...xs),
    mean,
  };
}

/**
 * `a / b`, or NaN when either is not a finite number or `b` is not positive.
 * @param {number} a
 * @param {number} b
 * @returns {number}
 */
export function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN;
}

/**
 * Rounds to a precision that keeps 3-4 significant digits (results files
 * stay readable; nothing here is measured to more than that).
 * @param {number} x
 * @returns {number}
 */
export function round(x) {
  if (!Number.isFinite(x)) return x;
  const abs = Math.abs(x);
  const digits = abs >= 100 ? 1 : abs >= 1 ? 2 : 4;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
