/**
 * How the pages write numbers, sizes and times.
 *
 * @module
 */

/** `1.5 GiB`, `300 MiB` from MiB. */
export function mib(n: number): string {
  return n >= 1024 ? `${(n / 1024).toFixed(1)} GiB` : `${Math.round(n)} MiB`;
}

/** `1.5 GiB` from bytes. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 2 ** 20) return `${(n / 1024).toFixed(1)} KiB`;
  return mib(n / 2 ** 20);
}

/** `3 s`, `5 min`, `2 h` for a span in ms. */
export function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** `5 min ago` / `in 5 min` for an ISO time. */
export function relative(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  const d = t - now;
  return d >= 0 ? `in ${span(d)}` : `${span(d)} ago`;
}

/** A latency in ms, or a dash. */
export function latency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}
