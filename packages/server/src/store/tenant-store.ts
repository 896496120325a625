/**
 * Tenants and API keys of a node, in the node database (`tenants`,
 * `api_keys`). A key is stored only as `hashApiKey`'s digest (plus its
 * first characters, to recognise it); the plain key exists in the answer
 * to its creation and nowhere else. Lookups go by digest (a unique index):
 * keys carry 160 random bits, so there is nothing to guess from timing.
 * Revoking sets `revoked_at`; the next lookup no longer finds the key.
 *
 * @module
 */
import type { Statement } from 'better-sqlite3';
import {
  AenvError,
  API_KEY_PREFIX_LENGTH,
  hashApiKey,
  newApiKey,
  newId,
  type ApiKeyRole,
  type ApiKeyView,
  type CreatedApiKey,
  type TenantQuotas,
  type TenantView,
  type UpdateTenantBody,
} from '@aenv/shared';
import type { NodeDb } from './node-db.js';

interface TenantRow {
  readonly id: string;
  readonly quotas: string;
  readonly created_at: string;
}

interface KeyRow {
  readonly id: string;
  readonly tenant: string;
  readonly name: string;
  readonly role: string;
  readonly prefix: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/** What a new key is made with. */
export interface NewKeyOptions {
  readonly tenant: string;
  readonly name?: string | undefined;
  readonly role?: ApiKeyRole | undefined;
  /** Import this plain key instead of generating one (the node's first key). */
  readonly key?: string | undefined;
}

/** The node's tenants and API keys. */
export class TenantStore {
  readonly #db: NodeDb;
  readonly #tenant: Statement<[string]>;
  readonly #byHash: Statement<[string]>;
  readonly #quotasCache = new Map<string, TenantQuotas>();

  constructor(db: NodeDb) {
    this.#db = db;
    this.#tenant = db.db.prepare('SELECT * FROM tenants WHERE id = ?');
    this.#byHash = db.db.prepare('SELECT * FROM api_keys WHERE hash = ? AND revoked_at IS NULL');
  }

  /** Every tenant, oldest first. */
  listTenants(): TenantView[] {
    const rows = this.#db.db.prepare('SELECT * FROM tenants ORDER BY rowid').all() as TenantRow[];
    return rows.map(tenantView);
  }

  /** A tenant, or undefined. */
  findTenant(id: string): TenantView | undefined {
    const row = this.#tenant.get(id) as TenantRow | undefined;
    return row === undefined ? undefined : tenantView(row);
  }

  /**
   * A tenant.
   * @throws {AenvError} `TENANT_NOT_FOUND`.
   */
  getTenant(id: string): TenantView {
    const t = this.findTenant(id);
    if (t === undefined) {
      throw new AenvError('TENANT_NOT_FOUND', `tenant '${id}' not found`, {
        fields: { tenant: id },
      });
    }
    return t;
  }

  /** A tenant's quotas (cached: read on every create); `{}` for an unknown tenant. */
  quotasOf(id: string): TenantQuotas {
    let q = this.#quotasCache.get(id);
    if (q === undefined) {
      q = this.findTenant(id)?.quotas ?? {};
      this.#quotasCache.set(id, q);
    }
    return q;
  }

  /**
   * Creates a tenant.
   * @throws {AenvError} `TENANT_EXISTS`.
   */
  createTenant(id: string, quotas: TenantQuotas = {}): TenantView {
    if (this.findTenant(id) !== undefined) {
      throw new AenvError('TENANT_EXISTS', `tenant '${id}' exists`, { fields: { tenant: id } });
    }
    this.#db.db
      .prepare('INSERT INTO tenants (id, quotas, created_at) VALUES (?, ?, ?)')
      .run(id, JSON.stringify(compact(quotas)), new Date().toISOString());
    this.#quotasCache.delete(id);
    return this.getTenant(id);
  }

  /**
   * Replaces the quotas named in `patch` (`null` or 0 clears one).
   * @throws {AenvError} `TENANT_NOT_FOUND`.
   */
  updateTenant(id: string, patch: UpdateTenantBody['quotas']): TenantView {
    const merged = { ...this.getTenant(id).quotas, ...patch };
    this.#db.db
      .prepare('UPDATE tenants SET quotas = ? WHERE id = ?')
      .run(JSON.stringify(compact(merged)), id);
    this.#quotasCache.delete(id);
    return this.getTenant(id);
  }

  /**
   * Deletes a tenant and revokes its keys (the caller checks it owns nothing).
   * @throws {AenvError} `TENANT_NOT_FOUND`.
   */
  deleteTenant(id: string): void {
    this.getTenant(id);
    const now = new Date().toISOString();
    this.#db.transaction(() => {
      this.#db.db
        .prepare('UPDATE api_keys SET revoked_at = ? WHERE tenant = ? AND revoked_at IS NULL')
        .run(now, id);
      this.#db.db.prepare('DELETE FROM tenants WHERE id = ?').run(id);
    });
    this.#quotasCache.delete(id);
  }

  /** Keys (revoked ones included), oldest first; of one tenant when given. */
  listKeys(tenant?: string): ApiKeyView[] {
    const rows =
      tenant === undefined
        ? this.#db.db.prepare('SELECT * FROM api_keys ORDER BY rowid').all()
        : this.#db.db.prepare('SELECT * FROM api_keys WHERE tenant = ? ORDER BY rowid').all(tenant);
    return (rows as KeyRow[]).map(keyView);
  }

  /** How many keys were ever recorded (0 = a node's first start). */
  keyCount(): number {
    const row = this.#db.db.prepare('SELECT count(*) AS n FROM api_keys').get() as { n: number };
    return row.n;
  }

  /**
   * Creates (or imports) a key; the answer is the only place the plain key appears.
   * @throws {AenvError} `TENANT_NOT_FOUND`.
   */
  createKey(o: NewKeyOptions): CreatedApiKey {
    this.getTenant(o.tenant);
    const key = o.key ?? newApiKey();
    const view: ApiKeyView = {
      id: newId(),
      tenant: o.tenant,
      name: o.name ?? '',
      role: o.role ?? 'member',
      prefix: key.slice(0, API_KEY_PREFIX_LENGTH),
      createdAt: new Date().toISOString(),
    };
    this.#db.db
      .prepare(
        `INSERT INTO api_keys (id, tenant, name, role, prefix, hash, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        view.id,
        view.tenant,
        view.name,
        view.role,
        view.prefix,
        hashApiKey(key),
        view.createdAt,
      );
    return { ...view, key };
  }

  /**
   * Revokes a key at once (revoking a revoked key changes nothing).
   * @throws {AenvError} `API_KEY_NOT_FOUND`.
   */
  revokeKey(id: string): void {
    const row = this.#db.db.prepare('SELECT id FROM api_keys WHERE id = ?').get(id);
    if (row === undefined) {
      throw new AenvError('API_KEY_NOT_FOUND', `API key ${id} not found`, {
        fields: { keyId: id },
      });
    }
    this.#db.db
      .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
      .run(new Date().toISOString(), id);
  }

  /** The live key whose plain text is `key`, or undefined. */
  findKey(key: string): ApiKeyView | undefined {
    const row = this.#byHash.get(hashApiKey(key)) as KeyRow | undefined;
    return row === undefined ? undefined : keyView(row);
  }
}

/** Drops cleared quotas (`null`, 0): absent means unlimited. */
function compact(q: UpdateTenantBody['quotas']): TenantQuotas {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(q)) if (typeof v === 'number' && v > 0) out[k] = v;
  return out;
}

function tenantView(row: TenantRow): TenantView {
  return { id: row.id, quotas: JSON.parse(row.quotas) as TenantQuotas, createdAt: row.created_at };
}

function keyView(row: KeyRow): ApiKeyView {
  return {
    id: row.id,
    tenant: row.tenant,
    name: row.name,
    role: row.role === 'admin' ? 'admin' : 'member',
    prefix: row.prefix,
    createdAt: row.created_at,
    ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at }),
  };
}
