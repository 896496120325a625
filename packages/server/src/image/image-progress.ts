/**
 * Progress of long image work (pulls, conversions), in the shape the node
 * streams to clients (`{"type":"progress", ...}` lines) and turns into
 * template build logs: a stage (`resolve`, `layer 2/5 0123456789ab`), a
 * status, the phase within the stage and byte counts.
 *
 * @module
 */

/** One progress report. */
export interface PullProgress {
  /** What is being worked on: `resolve`, `layer <i>/<n> <short digest>`, `image`. */
  readonly stage: string;
  readonly status: 'start' | 'progress' | 'done';
  /** `download` and `convert` carry bytes of the layer blob; `cached` needs no work. */
  readonly phase?: 'resolve' | 'download' | 'convert' | 'cached';
  readonly bytes?: number;
  readonly totalBytes?: number;
  readonly message?: string;
}

/** Receives progress. */
export type PullProgressListener = (e: PullProgress) => void;

/**
 * Wraps a listener so `progress` events of one stage come at most every
 * `intervalMs` (start and done always pass).
 */
export function throttleProgress(
  listener: PullProgressListener,
  intervalMs = 200,
): PullProgressListener {
  const last = new Map<string, number>();
  return (e) => {
    const key = `${e.stage}|${e.phase ?? ''}`;
    if (e.status === 'progress') {
      const now = Date.now();
      if (now - (last.get(key) ?? 0) < intervalMs) return;
      last.set(key, now);
    }
    listener(e);
  };
}

/** One line describing a progress event (for build logs). */
export function describePullProgress(e: PullProgress): string {
  const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
  const parts = [e.stage];
  if (e.phase !== undefined) parts.push(e.phase);
  if (e.bytes !== undefined && e.totalBytes !== undefined)
    parts.push(`${mib(e.bytes)}/${mib(e.totalBytes)} MiB`);
  if (e.status === 'done') parts.push('done');
  if (e.message !== undefined) parts.push(e.message);
  return parts.join(' ');
}
