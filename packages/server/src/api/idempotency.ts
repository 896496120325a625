/**
 * `Idempotency-Key` for create and fork: a retried request with the same
 * key gets the first answer instead of creating again. A request arriving
 * while the first is still running waits for it. Successful answers are
 * kept in the node database for a day (they survive a restart); failures
 * are not kept, so a retry after a failure tries again. A key reused for a
 * different route is refused.
 *
 * @module
 */
import type { Statement } from 'better-sqlite3';
import { AenvError } from '@aenv/shared';
import type { NodeDb } from '../store/node-db.js';
import type { Reply } from './router.js';

/** Longest accepted key. */
export const MAX_IDEMPOTENCY_KEY = 255;

interface Row {
  readonly scope: string;
  readonly status: number;
  readonly body: string;
}

/** Remembers the answers of idempotent requests. */
export class IdempotencyCache {
  readonly #ttlMs: number;
  readonly #get: Statement<[string, number]>;
  readonly #put: Statement;
  readonly #expire: Statement<[number]>;
  readonly #inflight = new Map<string, Promise<Reply>>();

  constructor(db: NodeDb, ttlMs = 24 * 3600 * 1000) {
    this.#ttlMs = ttlMs;
    this.#get = db.db.prepare(
      'SELECT scope, status, body FROM idempotency WHERE key = ? AND created_at > ?',
    );
    this.#put = db.db.prepare(
      'INSERT OR REPLACE INTO idempotency (key, scope, status, body, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.#expire = db.db.prepare('DELETE FROM idempotency WHERE created_at <= ?');
  }

  /**
   * Runs `handler` once per key and scope; later calls get its answer.
   * @throws {AenvError} `API_BODY_INVALID` for a bad or reused key.
   */
  async run(key: string, scope: string, handler: () => Promise<Reply>): Promise<Reply> {
    if (key === '' || key.length > MAX_IDEMPOTENCY_KEY) {
      throw new AenvError(
        'API_BODY_INVALID',
        `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY} characters`,
        {
          fields: { field: 'Idempotency-Key' },
        },
      );
    }
    const now = Date.now();
    this.#expire.run(now - this.#ttlMs);
    const row = this.#get.get(key, now - this.#ttlMs) as Row | undefined;
    if (row !== undefined) {
      if (row.scope !== scope) throw reused(key);
      return {
        status: row.status,
        body: JSON.parse(row.body) as unknown,
        headers: { 'idempotent-replayed': 'true' },
      };
    }
    const running = this.#inflight.get(key);
    if (running !== undefined) return running;
    const first = handler().then((reply) => {
      if (reply.status >= 200 && reply.status < 300) {
        this.#put.run(key, scope, reply.status, JSON.stringify(reply.body ?? null), Date.now());
      }
      return reply;
    });
    this.#inflight.set(key, first);
    try {
      return await first;
    } finally {
      this.#inflight.delete(key);
    }
  }
}

function reused(key: string): AenvError {
  return new AenvError(
    'API_BODY_INVALID',
    `Idempotency-Key '${key}' was used for a different request`,
    {
      fields: { field: 'Idempotency-Key' },
    },
  );
}
