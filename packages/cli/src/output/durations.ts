/**
 * Durations on the command line (`300`, `90s`, `5m`, `1h30m`) and
 * relative times in tables (`3m ago`, `in 4m`).
 *
 * @module
 */
import { UsageError } from '../cli-error.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Milliseconds of a duration; a bare number is seconds.
 * @throws {UsageError} naming the option
 */
export function parseDuration(text: string, option: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) {
    throw new UsageError(
      `--${option}: '${text}' is not a duration (examples: 300, 90s, 5m, 1h30m)`,
    );
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * (UNIT_MS[p[2] ?? 's'] ?? 1000), 0);
}

/** `42s`, `3m`, `5h`, `2d`: the largest whole unit. */
export function shortDuration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** `3m ago` or `in 4m`, relative to `now`. */
export function relativeTime(when: Date, now: Date = new Date()): string {
  const delta = when.getTime() - now.getTime();
  return delta >= 0 ? `in ${shortDuration(delta)}` : `${shortDuration(delta)} ago`;
}
