/**
 * Dashboard login sessions. A session is an opaque random id (256 bits,
 * base64url) that the browser holds in the `aenv_session` cookie
 * (`HttpOnly`, `SameSite=Strict`, `Path=/ui`); the API key it stands for
 * stays in this process's memory and never reaches the page's JavaScript.
 *
 * Sessions expire `ttlMs` after login (no sliding renewal: a stolen cookie
 * is worth at most one TTL) and are forgotten at logout or restart (the
 * operator logs in again). The store holds at most `maxSessions`; the
 * oldest goes first when it is full, so a login loop cannot grow memory.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';

/** The cookie that carries the session id. */
export const SESSION_COOKIE = 'aenv_session';

/** How long a session lasts when the host does not say. */
export const DEFAULT_SESSION_TTL_MS = 12 * 3600_000;

interface Session {
  readonly key: string;
  readonly expiresAt: number;
}

/** Options of a {@link SessionStore}. */
export interface SessionStoreOptions {
  /** Lifetime of a session. @default 12 h */
  readonly ttlMs?: number;
  /** Most sessions kept at once. @default 1000 */
  readonly maxSessions?: number;
  /** The clock (tests). @default Date.now */
  readonly now?: () => number;
}

/** In-memory login sessions. */
export class SessionStore {
  readonly ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;
  /** Insertion-ordered, so the first entry is the oldest. */
  readonly #sessions = new Map<string, Session>();

  constructor(options: SessionStoreOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.#max = options.maxSessions ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  /** Opens a session for an accepted key; returns its id. */
  create(key: string): string {
    this.#sweep();
    while (this.#sessions.size >= this.#max) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { key, expiresAt: this.#now() + this.ttlMs });
    return id;
  }

  /** The key of a live session, or undefined (unknown, expired or malformed id). */
  keyOf(id: string | undefined): string | undefined {
    if (id === undefined || id === '') return undefined;
    const s = this.#sessions.get(id);
    if (s === undefined) return undefined;
    if (s.expiresAt <= this.#now()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return s.key;
  }

  /** When a live session ends (ms since the epoch), or undefined. */
  expiresAt(id: string): number | undefined {
    return this.keyOf(id) === undefined ? undefined : this.#sessions.get(id)?.expiresAt;
  }

  /** Ends a session; unknown ids are ignored. */
  delete(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(id);
  }

  /** Ends every session of a key (the key was revoked). */
  deleteKey(key: string): void {
    for (const [id, s] of this.#sessions) if (s.key === key) this.#sessions.delete(id);
  }

  /** Live sessions. */
  get size(): number {
    this.#sweep();
    return this.#sessions.size;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [id, s] of this.#sessions) if (s.expiresAt <= now) this.#sessions.delete(id);
  }
}
