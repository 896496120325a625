/**
 * Streams events from a queue to a server-streaming RPC, inserting
 * `keepalive` messages after each idle interval and stopping when the RPC's
 * signal aborts (client gone or `Connect-Timeout-Ms` passed).
 *
 * The interval comes from the client's `Keepalive-Ping-Interval` header (in
 * seconds; the SDKs send 50), else 90 s, as E2B's envd does.
 *
 * @module
 */
import type { EventQueue } from './event-queue.js';

/** The keepalive interval used when the client sends none. */
export const DEFAULT_KEEPALIVE_MS = 90_000;

/** The keepalive interval a request asks for, in milliseconds. */
export function keepaliveInterval(headers: Headers): number {
  const raw = headers.get('keepalive-ping-interval');
  const seconds = raw === null ? NaN : Number(raw);
  return Number.isFinite(seconds) && seconds > 0
    ? Math.max(seconds * 1000, 100)
    : DEFAULT_KEEPALIVE_MS;
}

/** What {@link pumpEvents} needs besides the queue. */
export interface PumpOptions<T, O> {
  readonly signal: AbortSignal;
  readonly intervalMs: number;
  readonly keepalive: () => O;
  readonly toMessage: (item: T) => O;
  /** Whether an item is the last one of the stream. */
  readonly isLast?: (item: T) => boolean;
}

const TICK = Symbol('keepalive');

/**
 * Yields a message per queued item, and a keepalive after every idle
 * interval; throws the signal's reason when it aborts.
 */
export async function* pumpEvents<T, O>(
  queue: EventQueue<T>,
  opts: PumpOptions<T, O>,
): AsyncGenerator<O> {
  const { signal } = opts;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});
  let pending = queue.next();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<typeof TICK>((resolve) => {
        timer = setTimeout(() => resolve(TICK), opts.intervalMs);
      });
      const result = await Promise.race([pending, tick, aborted]).finally(() =>
        clearTimeout(timer),
      );
      if (result === TICK) {
        yield opts.keepalive();
        continue;
      }
      // A closed queue can win the race against the abort that closed it.
      if (result.done === true) {
        if (signal.aborted) throw signal.reason as Error;
        return;
      }
      pending = queue.next();
      yield opts.toMessage(result.value);
      if (opts.isLast?.(result.value) === true) return;
    }
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    queue.close();
  }
}
