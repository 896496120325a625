/**
 * Who a gateway request acts for: the `X-API-Key` header matched against
 * the bootstrap keys of the configuration (role `admin`, in memory) and
 * then the keys of the {@link TenantStore} (one Redis read per request, no
 * cache, so a revoke through any replica holds on the next request).
 *
 * The dashboard's key check is synchronous; for it {@link TenantAuth.knows}
 * answers from a set of active key digests refreshed every second (and
 * just before each dashboard login), so a revoked key's dashboard session
 * ends within about a second.
 *
 * @module
 */
import { AenvError, hashApiKey, type ApiKeyRole } from '@aenv/shared';
import type { TenantKeys } from '../gateway/tenant-keys.js';
import type { TenantStore } from './tenant-store.js';

/** The caller of a request. */
export interface Caller {
  readonly tenant: string;
  readonly role: ApiKeyRole;
  /** The store key's id; undefined for a bootstrap key. */
  readonly keyId?: string;
}

/** How often {@link TenantAuth.knows}'s digests are refreshed. */
const WATCH_INTERVAL_MS = 1000;

/** Authenticates gateway requests. */
export class TenantAuth {
  readonly #bootstrap: TenantKeys;
  readonly #store: TenantStore;
  #active = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(bootstrap: TenantKeys, store: TenantStore) {
    this.#bootstrap = bootstrap;
    this.#store = store;
  }

  /**
   * The caller of a request with this `X-API-Key` header.
   * @throws {AenvError} `API_UNAUTHENTICATED`, `CLUSTER_STATE_UNAVAILABLE`.
   */
  async authenticate(header: string | string[] | undefined): Promise<Caller> {
    const given = Array.isArray(header) ? header[0] : header;
    if (given === undefined || given === '') {
      throw new AenvError('API_UNAUTHENTICATED', 'missing API key: send it as X-API-Key');
    }
    const boot = this.#bootstrap.lookup(given);
    if (boot !== undefined) return { tenant: boot, role: 'admin' };
    const key = await this.#store.keyByDigest(hashApiKey(given));
    if (key === undefined) throw new AenvError('API_UNAUTHENTICATED', 'invalid API key');
    return { tenant: key.tenant, role: key.role, keyId: key.id };
  }

  /** Whether `key` is valid now, to within a second (synchronous: the dashboard's check). */
  knows(key: string): boolean {
    return this.#bootstrap.lookup(key) !== undefined || this.#active.has(hashApiKey(key));
  }

  /** Reloads {@link knows}'s digests now (before a dashboard login, so a new key works at once). */
  async refresh(): Promise<void> {
    this.#active = await this.#store.activeDigests();
  }

  /** Starts refreshing {@link knows}'s digests every second; resolves after the first refresh. */
  async watch(onError: (err: unknown) => void): Promise<void> {
    const refresh = (): Promise<void> => this.refresh().catch(onError);
    await refresh();
    this.#timer = setInterval(() => void refresh(), WATCH_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Stops the refresh. */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
