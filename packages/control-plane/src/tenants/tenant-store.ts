/**
 * Tenants and API keys of a cluster, in Redis beside the rest of the
 * cluster state, so every gateway replica sees the same ones. Layout
 * (under the cluster key prefix):
 *
 * | key                    | type   | holds                                        |
 * | ---------------------- | ------ | -------------------------------------------- |
 * | `tenants`              | set    | tenant ids                                   |
 * | `tenant:<id>`          | string | JSON `{id, quotas, createdAt}`               |
 * | `tenant:<id>:keys`     | set    | ids of the tenant's keys (revoked included)  |
 * | `apikey:<digest>`      | string | JSON {@link ApiKeyView} of a key             |
 * | `apikeyid:<keyId>`     | string | the digest of key `keyId`                    |
 * | `apikeys:active`       | set    | digests of unrevoked keys                    |
 *
 * Only {@link hashApiKey} digests are stored; the plain key exists in the
 * answer to its creation and nowhere else. Nothing is cached: a revoke is
 * seen by every replica on its next request.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  AenvError,
  API_KEY_PREFIX_LENGTH,
  hashApiKey,
  newApiKey,
  type ApiKeyRole,
  type ApiKeyView,
  type CreatedApiKey,
  type TenantQuotas,
} from '@aenv/shared';
import { stateUnavailable } from '../state/redis-connection.js';

/** The Redis keys of the store. */
export function tenantStoreKeys(prefix: string) {
  return {
    tenants: `${prefix}tenants`,
    tenant: (id: string) => `${prefix}tenant:${id}`,
    tenantKeys: (id: string) => `${prefix}tenant:${id}:keys`,
    tenantSandboxes: (id: string) => `${prefix}tenant:${id}:sandboxes`,
    key: (digest: string) => `${prefix}apikey:${digest}`,
    keyId: (id: string) => `${prefix}apikeyid:${id}`,
    active: `${prefix}apikeys:active`,
  };
}

/** A stored tenant (the admin view without usage). */
export interface StoredTenant {
  readonly id: string;
  readonly quotas: TenantQuotas;
  readonly createdAt: string;
}

function tenantNotFound(id: string): AenvError {
  return new AenvError('TENANT_NOT_FOUND', `tenant '${id}' not found`, { fields: { tenant: id } });
}

function parse<T>(text: string | null): T | undefined {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** Drops unset and zero quotas (both mean "no limit"). */
function cleanQuotas(q: { readonly [K in keyof TenantQuotas]?: number | null }): TenantQuotas {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(q)) if (typeof v === 'number' && v > 0) out[k] = v;
  return out;
}

/** Tenants and keys in Redis. */
export class TenantStore {
  readonly redis: Redis;
  readonly keys: ReturnType<typeof tenantStoreKeys>;

  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.keys = tenantStoreKeys(prefix);
  }

  /** Creates a tenant unless it exists (bootstrap tenants at start). */
  async ensureTenant(id: string): Promise<void> {
    const t: StoredTenant = { id, quotas: {}, createdAt: new Date().toISOString() };
    await this.#run(() =>
      this.redis
        .multi()
        .set(this.keys.tenant(id), JSON.stringify(t), 'NX')
        .sadd(this.keys.tenants, id)
        .exec(),
    );
  }

  /**
   * Creates a tenant.
   * @throws {AenvError} `TENANT_EXISTS`.
   */
  async createTenant(id: string, quotas: TenantQuotas): Promise<StoredTenant> {
    const t: StoredTenant = {
      id,
      quotas: cleanQuotas(quotas),
      createdAt: new Date().toISOString(),
    };
    const ok = await this.#run(() => this.redis.set(this.keys.tenant(id), JSON.stringify(t), 'NX'));
    if (ok !== 'OK') {
      throw new AenvError('TENANT_EXISTS', `tenant '${id}' exists`, { fields: { tenant: id } });
    }
    await this.#run(() => this.redis.sadd(this.keys.tenants, id));
    return t;
  }

  /** A tenant, or undefined. */
  async tenant(id: string): Promise<StoredTenant | undefined> {
    return parse<StoredTenant>(await this.#run(() => this.redis.get(this.keys.tenant(id))));
  }

  /**
   * A tenant.
   * @throws {AenvError} `TENANT_NOT_FOUND`.
   */
  async requireTenant(id: string): Promise<StoredTenant> {
    const t = await this.tenant(id);
    if (t === undefined) throw tenantNotFound(id);
    return t;
  }

  /** Every tenant, by id. */
  async tenants(): Promise<StoredTenant[]> {
    const ids = (await this.#run(() => this.redis.smembers(this.keys.tenants))).sort();
    if (ids.length === 0) return [];
    const texts = await this.#run(() => this.redis.mget(ids.map((i) => this.keys.tenant(i))));
    return texts.flatMap((t) => parse<StoredTenant>(t) ?? []);
  }

  /**
   * Replaces the quotas named in `quotas` (`null`/0 clears one).
   * @throws {AenvError} `TENANT_NOT_FOUND`.
   */
  async updateQuotas(
    id: string,
    quotas: { readonly [K in keyof TenantQuotas]?: number | null },
  ): Promise<StoredTenant> {
    const t = await this.requireTenant(id);
    const next: StoredTenant = { ...t, quotas: cleanQuotas({ ...t.quotas, ...quotas }) };
    await this.#run(() => this.redis.set(this.keys.tenant(id), JSON.stringify(next), 'XX'));
    return next;
  }

  /**
   * Deletes a tenant that owns no sandbox and revokes its keys.
   * @throws {AenvError} `TENANT_NOT_FOUND`, `TENANT_NOT_EMPTY`.
   */
  async deleteTenant(id: string): Promise<void> {
    await this.requireTenant(id);
    const owned = await this.#run(() => this.redis.scard(this.keys.tenantSandboxes(id)));
    if (owned > 0) {
      throw new AenvError('TENANT_NOT_EMPTY', `tenant '${id}' still owns ${owned} sandboxes`, {
        fields: { tenant: id, sandboxes: owned },
      });
    }
    for (const k of await this.keysOf(id)) if (k.revokedAt === undefined) await this.revoke(k.id);
    await this.#run(() =>
      this.redis.multi().del(this.keys.tenant(id)).srem(this.keys.tenants, id).exec(),
    );
  }

  /**
   * Creates a key for an existing tenant; the answer is the only place the
   * plain key appears.
   * @throws {AenvError} `TENANT_NOT_FOUND`.
   */
  async createKey(tenant: string, name: string, role: ApiKeyRole): Promise<CreatedApiKey> {
    await this.requireTenant(tenant);
    const key = newApiKey();
    const digest = hashApiKey(key);
    const view: ApiKeyView = {
      id: `key_${randomBytes(8).toString('hex')}`,
      tenant,
      name,
      role,
      prefix: key.slice(0, API_KEY_PREFIX_LENGTH),
      createdAt: new Date().toISOString(),
    };
    await this.#run(() =>
      this.redis
        .multi()
        .set(this.keys.key(digest), JSON.stringify(view))
        .set(this.keys.keyId(view.id), digest)
        .sadd(this.keys.tenantKeys(tenant), view.id)
        .sadd(this.keys.active, digest)
        .exec(),
    );
    return { ...view, key };
  }

  /** The unrevoked key whose digest is `digest`, or undefined. */
  async keyByDigest(digest: string): Promise<ApiKeyView | undefined> {
    const view = parse<ApiKeyView>(await this.#run(() => this.redis.get(this.keys.key(digest))));
    return view?.revokedAt === undefined ? view : undefined;
  }

  /** Keys of one tenant, or of all tenants. */
  async listKeys(tenant?: string): Promise<ApiKeyView[]> {
    const tenants = tenant === undefined ? (await this.tenants()).map((t) => t.id) : [tenant];
    const all = (await Promise.all(tenants.map((t) => this.keysOf(t)))).flat();
    return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /**
   * Revokes a key at once (its record stays, marked, for the listing).
   * @throws {AenvError} `API_KEY_NOT_FOUND`.
   */
  async revoke(keyId: string): Promise<void> {
    const digest = await this.#run(() => this.redis.get(this.keys.keyId(keyId)));
    const view =
      digest === null
        ? undefined
        : parse<ApiKeyView>(await this.#run(() => this.redis.get(this.keys.key(digest))));
    if (digest === null || view === undefined) {
      throw new AenvError('API_KEY_NOT_FOUND', `API key ${keyId} not found`, {
        fields: { keyId },
      });
    }
    const revoked: ApiKeyView = { ...view, revokedAt: view.revokedAt ?? new Date().toISOString() };
    await this.#run(() =>
      this.redis
        .multi()
        .set(this.keys.key(digest), JSON.stringify(revoked))
        .srem(this.keys.active, digest)
        .exec(),
    );
  }

  /** Digests of every unrevoked key. */
  async activeDigests(): Promise<Set<string>> {
    return new Set(await this.#run(() => this.redis.smembers(this.keys.active)));
  }

  async keysOf(tenant: string): Promise<ApiKeyView[]> {
    const ids = await this.#run(() => this.redis.smembers(this.keys.tenantKeys(tenant)));
    if (ids.length === 0) return [];
    const digests = await this.#run(() => this.redis.mget(ids.map((i) => this.keys.keyId(i))));
    const present = digests.filter((d): d is string => d !== null);
    if (present.length === 0) return [];
    const texts = await this.#run(() => this.redis.mget(present.map((d) => this.keys.key(d))));
    return texts.flatMap((t) => parse<ApiKeyView>(t) ?? []);
  }

  async #run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw stateUnavailable(err);
    }
  }
}
