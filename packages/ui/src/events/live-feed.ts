/**
 * What the dashboard shows live, polled from the API with one session's
 * key: sandboxes (running and paused, each with its parent and lineage from
 * `GET /sandboxes/{id}`, fetched once per sandbox and state), nodes, and
 * every few polls templates and snapshots. Each kind is pushed only when it
 * changed. Polling the API (rather than hooking the orchestrator) keeps the
 * feed the same on a node and on a gateway, and shows each key only what
 * the API shows it.
 *
 * A 401 (the key was revoked) ends the feed with `unauthorized`; other
 * failures are reported once as `feed-error` and retried at the next poll.
 *
 * @module
 */
import { ApiCallError, type ApiClient } from '../api/api-client.js';

/** Emits one named event with a JSON payload. */
export type FeedSink = (event: string, data: unknown) => void;

/** A sandbox as the list shows it. */
interface ListedSandbox {
  readonly sandboxID: string;
  readonly state: string;
  readonly [field: string]: unknown;
}

/** Options of a {@link LiveFeed}. */
export interface LiveFeedOptions {
  /** @default 1000 */
  readonly intervalMs?: number;
  /** Templates and snapshots are read every this many polls. @default 5 */
  readonly slowEvery?: number;
}

const DETAIL_FIELDS = ['parentSandboxID', 'lineage', 'network', 'lifecycle', 'domain'] as const;

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>) {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Polls the API for one subscriber. */
export class LiveFeed {
  readonly #api: ApiClient;
  readonly #sink: FeedSink;
  readonly #intervalMs: number;
  readonly #slowEvery: number;
  readonly #sent = new Map<string, string>();
  /** Detail fields by `id:state`. */
  #details = new Map<string, Record<string, unknown>>();
  #polls = 0;
  #timer: NodeJS.Timeout | undefined;
  #failing = false;
  #stopped = false;

  constructor(api: ApiClient, sink: FeedSink, options: LiveFeedOptions = {}) {
    this.#api = api;
    this.#sink = sink;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#slowEvery = options.slowEvery ?? 5;
  }

  /** Polls now and then every interval, each poll after the previous one finished. */
  start(): void {
    const loop = async (): Promise<void> => {
      await this.poll();
      if (!this.#stopped) this.#timer = setTimeout(() => void loop(), this.#intervalMs);
    };
    void loop();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** One poll: reads and pushes what changed. Never throws. */
  async poll(): Promise<void> {
    try {
      const slow = this.#polls++ % this.#slowEvery === 0;
      const [sandboxes, nodes] = await Promise.all([
        this.#sandboxes(),
        this.#api.call('GET', '/nodes'),
      ]);
      this.#push('sandboxes', sandboxes);
      this.#push('nodes', nodes.body);
      if (slow) {
        const [templates, snapshots] = await Promise.all([
          this.#api.call('GET', '/templates'),
          this.#api.list('/snapshots?limit=100'),
        ]);
        this.#push('templates', templates.body);
        this.#push('snapshots', snapshots);
      }
      if (this.#failing) this.#sink('feed-ok', {});
      this.#failing = false;
    } catch (err) {
      if (this.#stopped) return;
      if (err instanceof ApiCallError && err.status === 401) {
        this.#sink('unauthorized', { message: err.message });
        this.stop();
        return;
      }
      if (!this.#failing) {
        this.#sink('feed-error', { message: err instanceof Error ? err.message : String(err) });
      }
      this.#failing = true;
    }
  }

  async #sandboxes(): Promise<Record<string, unknown>[]> {
    const listed = await this.#api.list<ListedSandbox>(
      '/v2/sandboxes?state=running,paused&limit=100',
    );
    const details = new Map<string, Record<string, unknown>>();
    const enriched = await mapLimit(listed, 8, async (s) => {
      const key = `${s.sandboxID}:${s.state}`;
      let detail = this.#details.get(key);
      if (detail === undefined) detail = await this.#detail(s.sandboxID);
      details.set(key, detail);
      return { ...s, ...detail };
    });
    this.#details = details;
    return enriched;
  }

  async #detail(id: string): Promise<Record<string, unknown>> {
    try {
      const { body } = await this.#api.call<Record<string, unknown>>(
        'GET',
        `/sandboxes/${encodeURIComponent(id)}`,
      );
      const out: Record<string, unknown> = {};
      for (const f of DETAIL_FIELDS) if (body[f] !== undefined) out[f] = body[f];
      return out;
    } catch (err) {
      // Gone between the list and the read: shown without details until the next poll.
      if (err instanceof ApiCallError && err.status === 404) return {};
      throw err;
    }
  }

  #push(event: string, data: unknown): void {
    const text = JSON.stringify(data);
    if (this.#sent.get(event) === text) return;
    this.#sent.set(event, text);
    this.#sink(event, data);
  }
}
