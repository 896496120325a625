/**
 * The pure arithmetic of the load test (`bench/load.mjs`): timed samples
 * bucketed per minute with p50/p99, errors counted by code, and the
 * verdict on a memory series ("flat" when the last minute's average stays
 * within a tolerance of the second minute's, the first minute being
 * warm-up).
 *
 * @module
 */
import { percentile } from './stats.mjs';

const MINUTE_MS = 60_000;

/**
 * Per-minute summaries of timed samples.
 * @param {readonly { t: number, ms: number }[]} samples t: ms since the start
 * @param {number} minutes how many minutes to report (empty ones included)
 * @returns {{ minute: number, n: number, p50: number, p99: number }[]} minute counts from 1
 */
export function perMinute(samples, minutes) {
  const buckets = Array.from({ length: minutes }, () => []);
  for (const s of samples) {
    const i = Math.min(minutes - 1, Math.floor(s.t / MINUTE_MS));
    if (i >= 0) buckets[i].push(s.ms);
  }
  return buckets.map((xs, i) => ({
    minute: i + 1,
    n: xs.length,
    p50: percentile(xs, 50),
    p99: percentile(xs, 99),
  }));
}

/**
 * The error code of a failed operation: an aenv code (`SBX_CAPACITY`-like)
 * when the message carries one, else the error's class name (the e2b
 * SDK's `TimeoutError`, `SandboxError`, ...), else `unknown`.
 * @param {unknown} err
 * @returns {string}
 */
export function errorCode(err) {
  if (!(err instanceof Error)) return 'unknown';
  const code = /\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b/.exec(err.message)?.[1];
  if (code !== undefined) return code;
  return err.name !== '' && err.name !== 'Error' ? err.name : 'Error';
}

/**
 * Counts of each value of `codes`, largest first.
 * @param {readonly string[]} codes
 * @returns {Record<string, number>}
 */
export function countCodes(codes) {
  const counts = new Map();
  for (const c of codes) counts.set(c, (counts.get(c) ?? 0) + 1);
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
}

/**
 * @typedef {object} Flatness
 * @property {'flat' | 'growing' | 'shrinking' | 'too-short'} verdict
 * @property {number} baseline average of the first minute after warm-up (NaN when too short)
 * @property {number} last average of the last minute
 * @property {number} change (last - baseline) / baseline
 */

const mean = (xs) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * Whether a memory series stayed flat: the average of its last minute
 * against the average of its first minute after warm-up (the first minute
 * of the run: the sandboxes, caches and connection pools are still being
 * made), normally minute 2; a sampler starved under load may have left
 * gaps, so the baseline is the minute from the first sample after warm-up.
 * The two windows must not overlap (about three minutes at least). Shrinking
 * is no leak; it is named so the reader sees it.
 * @param {readonly { t: number, value: number }[]} series t: ms since the start
 * @param {number} tolerance e.g. 0.15 for 15 %
 * @returns {Flatness}
 */
export function flatness(series, tolerance) {
  const end = series.reduce((m, s) => Math.max(m, s.t), 0);
  const last = mean(series.filter((s) => s.t >= end - MINUTE_MS).map((s) => s.value));
  const from = Math.min(...series.filter((s) => s.t >= MINUTE_MS).map((s) => s.t));
  if (!Number.isFinite(from) || end - from < 2 * MINUTE_MS) {
    return { verdict: 'too-short', baseline: NaN, last, change: NaN };
  }
  const baseline = mean(
    series.filter((s) => s.t >= from && s.t < from + MINUTE_MS).map((s) => s.value),
  );
  const change = (last - baseline) / baseline;
  if (!Number.isFinite(change)) return { verdict: 'too-short', baseline, last, change };
  const verdict = change > tolerance ? 'growing' : change < -tolerance ? 'shrinking' : 'flat';
  return { verdict, baseline, last, change };
}
