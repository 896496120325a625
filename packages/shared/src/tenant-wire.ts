/**
 * The tenant and API-key vocabulary that the node, the gateway, the CLI and
 * the SDK share: the admin API's routes and bodies, the quota shape, and
 * the one way an API key is hashed for storage.
 *
 * A tenant (a team) owns sandboxes, templates and snapshots; every API key
 * belongs to exactly one tenant and is stored only as {@link hashApiKey}'s
 * digest (the plain key is shown once, when it is created). A key's role is
 * `member` (acts within its tenant) or `admin` (also manages tenants and
 * keys through `/admin/...`). Quotas are per tenant; an absent or zero
 * quota means no limit. A request over a quota is answered 429
 * `TENANT_QUOTA_EXCEEDED` with `Retry-After`.
 *
 * Admin routes (node and gateway alike):
 * - `GET /admin/tenants` → `TenantView[]`; `POST /admin/tenants`
 *   (`CreateTenantBody`) → 201 `TenantView`
 * - `GET /admin/tenants/{tenantId}` → `TenantView`; `PATCH` (`UpdateTenantBody`)
 *   → `TenantView`; `DELETE` → 204 (409 `TENANT_NOT_EMPTY` while it owns
 *   sandboxes; its keys are revoked)
 * - `GET /admin/keys[?tenant=ID]` → `ApiKeyView[]`; `POST /admin/keys`
 *   (`CreateApiKeyBody`) → 201 `CreatedApiKey`; `DELETE /admin/keys/{keyId}`
 *   → 204 (revoked at once)
 *
 * In a cluster the gateway authenticates clients and calls nodes with the
 * cluster key plus {@link TENANT_HEADER}; a node honours that header only
 * on requests that carry the cluster key.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { AenvError } from './aenv-error.js';

/** The tenant every pre-tenant key and resource belongs to. */
export const DEFAULT_TENANT = 'default';

/** The header a gateway names the acting tenant with (cluster key only). */
export const TENANT_HEADER = 'x-aenv-tenant';

/** What a key may do. */
export type ApiKeyRole = 'admin' | 'member';

/** Per-tenant limits; absent or 0 = unlimited. */
export interface TenantQuotas {
  /** Sandboxes that exist at once (running or paused). */
  readonly maxSandboxes?: number;
  /** vCPUs of running sandboxes, summed. */
  readonly maxVcpus?: number;
  /** Memory (MiB) of running sandboxes, summed. */
  readonly maxMemoryMB?: number;
  /** Sandbox creates (forks and cold starts included) per second, averaged over a one-second burst. */
  readonly createsPerSecond?: number;
}

/** The quota names, in display order. */
export const TENANT_QUOTA_NAMES = [
  'maxSandboxes',
  'maxVcpus',
  'maxMemoryMB',
  'createsPerSecond',
] as const satisfies readonly (keyof TenantQuotas)[];

/** What a tenant uses now (running or paused sandboxes; vCPU/memory of running ones). */
export interface TenantUsage {
  readonly sandboxes: number;
  readonly vcpus: number;
  readonly memoryMB: number;
}

/** A tenant as the admin API shows it. */
export interface TenantView {
  readonly id: string;
  readonly quotas: TenantQuotas;
  readonly createdAt: string;
  readonly usage?: TenantUsage;
}

/** An API key as the admin API shows it (never the key itself). */
export interface ApiKeyView {
  readonly id: string;
  readonly tenant: string;
  readonly name: string;
  readonly role: ApiKeyRole;
  /** The key's first characters, to recognise it (`e2b_1a2b3c4d`). */
  readonly prefix: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
}

/** The answer to a key creation: the only time the plain key is shown. */
export interface CreatedApiKey extends ApiKeyView {
  readonly key: string;
}

/** `POST /admin/tenants`. */
export interface CreateTenantBody {
  readonly id: string;
  readonly quotas?: TenantQuotas;
}

/** `PATCH /admin/tenants/{tenantId}`: the quotas given replace the old ones; `null`/0 clears one. */
export interface UpdateTenantBody {
  readonly quotas: { readonly [K in keyof TenantQuotas]?: number | null };
}

/** `POST /admin/keys`. */
export interface CreateApiKeyBody {
  readonly tenant: string;
  readonly name?: string;
  readonly role?: ApiKeyRole;
}

const TENANT_ID = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** How many characters of a key {@link ApiKeyView.prefix} shows. */
export const API_KEY_PREFIX_LENGTH = 12;

/**
 * The stored form of an API key: hex SHA-256. Keys are 160 random bits, so
 * a fast hash is enough (no dictionary to guess from); compare digests in
 * constant time.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * Checks a tenant id: 1–63 of `a-z 0-9 . _ -`, starting with a letter or digit.
 * @throws {AenvError} `TENANT_ID_INVALID`.
 */
export function parseTenantId(value: unknown): string {
  if (typeof value !== 'string' || !TENANT_ID.test(value)) {
    throw new AenvError(
      'TENANT_ID_INVALID',
      `tenant id must be 1-63 characters of a-z, 0-9, '.', '_', '-' starting with a letter or digit, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * Checks a quotas object: each known quota a non-negative integer
 * (`createsPerSecond` may be fractional), or `null` when `allowNull`.
 * @throws {AenvError} `API_BODY_INVALID`.
 */
export function parseTenantQuotas(
  value: unknown,
  allowNull = false,
): { [K in keyof TenantQuotas]?: number | null } {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AenvError('API_BODY_INVALID', "'quotas' must be an object");
  }
  const out: { -readonly [K in keyof TenantQuotas]?: number | null } = {};
  for (const [name, v] of Object.entries(value)) {
    if (!(TENANT_QUOTA_NAMES as readonly string[]).includes(name)) {
      throw new AenvError(
        'API_BODY_INVALID',
        `unknown quota '${name}' (known: ${TENANT_QUOTA_NAMES.join(', ')})`,
      );
    }
    const key = name as keyof TenantQuotas;
    out[key] = v === null && allowNull ? null : quotaValue(key, v);
  }
  return out;
}

function quotaValue(name: keyof TenantQuotas, v: unknown): number {
  const fractional = name === 'createsPerSecond';
  if (
    typeof v !== 'number' ||
    v < 0 ||
    !Number.isFinite(v) ||
    (!fractional && !Number.isInteger(v))
  ) {
    throw new AenvError(
      'API_BODY_INVALID',
      `quota '${name}' must be a non-negative ${fractional ? 'number' : 'integer'}`,
    );
  }
  return v;
}
