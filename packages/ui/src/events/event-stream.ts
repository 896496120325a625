/**
 * `GET /ui/events`: the dashboard's live updates as server-sent events.
 * On connect: `hello` (what this host is), `history` (the metrics points
 * of the last hour); then `sandboxes`, `nodes`, `templates`, `snapshots`
 * whenever they change (see `live-feed.ts`), `metrics` with each new
 * history point, and a comment line every 15 s so proxies keep the
 * connection open. The stream ends when the client goes away or the key is
 * revoked (`unauthorized`).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiClient } from '../api/api-client.js';
import { SECURITY_HEADERS } from '../http/http-io.js';
import type { MetricsHistory } from '../metrics/metrics-history.js';
import { LiveFeed } from './live-feed.js';

/** What one event stream needs. */
export interface EventStreamOptions {
  readonly api: ApiClient;
  /** Sent in `hello`. */
  readonly hello: Readonly<Record<string, unknown>>;
  readonly history: MetricsHistory | undefined;
  readonly pollIntervalMs: number;
  /** Called once when the stream ends. */
  readonly onClose?: () => void;
}

/** Formats one server-sent event. */
export function formatEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Serves one event stream until the client leaves. */
export function serveEventStream(
  req: IncomingMessage,
  res: ServerResponse,
  o: EventStreamOptions,
): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const send = (event: string, data: unknown): void => {
    if (!res.destroyed) res.write(formatEvent(event, data));
  };
  send('hello', o.hello);
  send('history', o.history?.points() ?? []);
  const feed = new LiveFeed(
    o.api,
    (event, data) => {
      send(event, data);
      if (event === 'unauthorized') res.end();
    },
    { intervalMs: o.pollIntervalMs },
  );
  const unsubscribe = o.history?.subscribe((p) => send('metrics', p));
  const ping = setInterval(() => {
    if (!res.destroyed) res.write(': ping\n\n');
  }, 15_000);
  ping.unref();
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    feed.stop();
    unsubscribe?.();
    clearInterval(ping);
    o.onClose?.();
  };
  req.once('close', close);
  res.once('close', close);
  feed.start();
}
