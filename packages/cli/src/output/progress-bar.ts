/**
 * Progress of image pulls and template builds: on a terminal one bar per
 * stage, redrawn in place (`layer 2/5  [#######.......]  48%  12.0/25.0
 * MiB`); on a pipe (CI logs) a line when a stage starts and ends, and at
 * most one progress line per stage every 5 seconds. Build output lines
 * (stage `build`) are always printed whole.
 *
 * @module
 */
import type { ProgressEvent } from '@aenv/sdk';
import type { OutStream } from '../cli-context.js';

/** Width of the bar itself, in cells. */
export const BAR_WIDTH = 24;

/** `[######..........]` for a fraction in [0, 1]. */
export function renderBar(fraction: number, width = BAR_WIDTH): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)}`;
}

/** One line describing an event (without the terminal's control characters). */
export function describeProgress(e: ProgressEvent): string {
  const parts = [e.stage];
  if (e.bytes !== undefined && e.totalBytes !== undefined && e.totalBytes > 0) {
    const f = e.bytes / e.totalBytes;
    parts.push(
      renderBar(f),
      `${Math.floor(f * 100)}%`.padStart(4),
      `${mib(e.bytes)}/${mib(e.totalBytes)} MiB`,
    );
  } else if (e.bytes !== undefined) {
    parts.push(`${mib(e.bytes)} MiB`);
  }
  if (e.status === 'done') parts.push('done');
  if (e.message !== undefined && e.message !== '') parts.push(e.message.slice(0, 120));
  return parts.join('  ');
}

/** Whether an event is a line of build output rather than a progress report. */
export function isLogLine(e: ProgressEvent): boolean {
  return (
    e.bytes === undefined &&
    e.totalBytes === undefined &&
    e.message !== undefined &&
    e.stage === 'build'
  );
}

/** A progress listener drawing on `out`. */
export function progressBar(
  out: OutStream,
  now: () => number = Date.now,
): (e: ProgressEvent) => void {
  const lastLine = new Map<string, number>();
  let drawing: string | undefined;
  return (e) => {
    const text = describeProgress(e);
    if (isLogLine(e)) {
      // Build output: every line is kept, above any bar being drawn.
      out.write(
        `${out.isTTY === true && drawing !== undefined ? '\r\x1b[K' : ''}${e.message ?? ''}\n`,
      );
      drawing = undefined;
      return;
    }
    if (out.isTTY === true) {
      if (drawing !== undefined && drawing !== e.stage) out.write('\n');
      out.write(`\r\x1b[K${text}`);
      drawing = e.stage;
      if (e.status === 'done') {
        out.write('\n');
        drawing = undefined;
      }
      return;
    }
    const last = lastLine.get(e.stage);
    const t = now();
    if (e.status === 'start' || e.status === 'done' || last === undefined || t - last >= 5000) {
      lastLine.set(e.stage, t);
      out.write(`${text}\n`);
    }
  };
}
