/**
 * Shows guest-artifact progress on a stream: one updating line per stage
 * on a terminal, and on a pipe (CI logs) one line per stage start and end
 * plus a progress line at most every 5 seconds.
 *
 * @module
 */
import type { GuestProgressEvent } from '@aenv/server';

interface Writable {
  write(s: string): unknown;
  readonly isTTY?: boolean;
}

function describe(e: GuestProgressEvent): string {
  const parts: string[] = [e.stage];
  if (e.percent !== undefined) parts.push(`${e.percent}%`);
  if (e.bytes !== undefined) {
    const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;
    parts.push(e.totalBytes === undefined ? mib(e.bytes) : `${mib(e.bytes)}/${mib(e.totalBytes)}`);
  }
  if (e.message !== undefined) parts.push(e.message.slice(0, 100));
  return parts.join(' ');
}

/** A progress listener writing to `out`. */
export function progressPrinter(out: Writable): (e: GuestProgressEvent) => void {
  let lastLine = 0;
  return (e) => {
    const prefix = 'aenv: preparing guest artifacts:';
    if (e.status === 'cached') return;
    if (e.status === 'done') {
      const secs = e.durationMs === undefined ? '' : ` in ${(e.durationMs / 1000).toFixed(1)} s`;
      out.write(`${out.isTTY === true ? '\r\x1b[K' : ''}${prefix} ${e.stage} done${secs}\n`);
      return;
    }
    if (out.isTTY === true) {
      out.write(`\r\x1b[K${prefix} ${describe(e)}`);
      return;
    }
    const now = Date.now();
    if (e.status === 'start' || now - lastLine > 5000) {
      lastLine = now;
      out.write(`${prefix} ${describe(e)}\n`);
    }
  };
}
