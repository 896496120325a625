/**
 * The admin API's JSON shapes (tenants, quotas, API keys), mirrored from
 * `@aenv/shared`'s `tenant-wire` because the SDK has no dependencies; the
 * CLI's suites check at compile time that the two stay the same shapes.
 * Times are ISO-8601 strings, as the node sends them.
 *
 * @module
 */

/** What a key may do: act within its tenant, or also manage tenants and keys. */
export type ApiKeyRole = 'admin' | 'member';

/** Per-tenant limits; absent or 0 = unlimited. */
export interface TenantQuotas {
  /** Sandboxes that exist at once (running or paused). */
  readonly maxSandboxes?: number;
  /** vCPUs of running sandboxes, summed. */
  readonly maxVcpus?: number;
  /** Memory (MiB) of running sandboxes, summed. */
  readonly maxMemoryMB?: number;
  /** Sandbox creates (forks and cold starts included) per second. */
  readonly createsPerSecond?: number;
}

/** A quota change: a number sets it, `null` or 0 clears it, an absent one stays. */
export type TenantQuotasUpdate = { readonly [K in keyof TenantQuotas]?: number | null };

/** What a tenant uses now (running or paused sandboxes; vCPU/memory of running ones). */
export interface TenantUsage {
  readonly sandboxes: number;
  readonly vcpus: number;
  readonly memoryMB: number;
}

/** A tenant. */
export interface TenantView {
  readonly id: string;
  readonly quotas: TenantQuotas;
  readonly createdAt: string;
  readonly usage?: TenantUsage;
}

/** An API key as the node shows it: never the key itself, only its first characters. */
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

/** A key just created: the only time the plain key is shown. */
export interface CreatedApiKey extends ApiKeyView {
  readonly key: string;
}

/** A new tenant. */
export interface CreateTenantBody {
  readonly id: string;
  readonly quotas?: TenantQuotas;
}

/** A new key. */
export interface CreateApiKeyBody {
  readonly tenant: string;
  readonly name?: string;
  /** @default 'member' */
  readonly role?: ApiKeyRole;
}
