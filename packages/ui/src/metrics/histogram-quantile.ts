/**
 * Quantiles of a cumulative-bucket histogram, computed the way Prometheus's
 * `histogram_quantile` does: find the bucket where the rank falls and
 * interpolate linearly inside it (the first bucket starts at 0); a rank in
 * the `+Inf` bucket answers the highest finite bound.
 *
 * @module
 */

/** One cumulative bucket: observations `<= le`. */
export interface Bucket {
  readonly le: number;
  readonly count: number;
}

/**
 * The `q` quantile (0..1) of cumulative buckets sorted by `le` (the last
 * one `+Inf`), or null when they hold no observation.
 */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number | null {
  const total = buckets.at(-1)?.count ?? 0;
  if (total <= 0 || buckets.length === 0) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      const inBucket = b.count - prevCount;
      if (inBucket <= 0) return b.le;
      return prevLe + (b.le - prevLe) * ((rank - prevCount) / inBucket);
    }
    prevLe = b.le === Infinity ? prevLe : b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/**
 * Per-bucket differences `now - before` (matching `le`); a bucket that went
 * down means the source restarted, so `now` is taken as the whole interval.
 */
export function bucketDelta(
  now: readonly Bucket[],
  before: readonly Bucket[] | undefined,
): Bucket[] {
  if (before === undefined) return [...now];
  const prev = new Map(before.map((b) => [b.le, b.count]));
  const diff = now.map((b) => ({ le: b.le, count: b.count - (prev.get(b.le) ?? 0) }));
  return diff.some((b) => b.count < 0) ? [...now] : diff;
}
