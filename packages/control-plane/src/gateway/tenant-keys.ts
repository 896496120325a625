/**
 * The gateway's bootstrap client keys and the tenant each belongs to. Keys
 * come from `gateway.apiKeys` and `gateway.apiKeyFile` (`KEY` or
 * `TENANT=KEY` entries; a bare key belongs to tenant `default`); they act
 * with the `admin` role (someone has to create the first tenants and
 * keys), are held only as sha256 digests in memory and compared in
 * constant time. Keys made through `/admin/keys` live in Redis
 * (`tenants/tenant-store.ts`). The gateway is the cluster's auth edge:
 * nodes see only the cluster's node key and the acting tenant.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AenvError, DEFAULT_TENANT } from '@aenv/shared';

export { DEFAULT_TENANT };

interface Entry {
  readonly digest: Buffer;
  readonly tenant: string;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The gateway's client keys. */
export class TenantKeys {
  readonly #entries: readonly Entry[];

  constructor(entries: readonly string[]) {
    this.#entries = entries.map((e) => {
      const eq = e.indexOf('=');
      const tenant = eq > 0 ? e.slice(0, eq).trim() : DEFAULT_TENANT;
      const key = (eq > 0 ? e.slice(eq + 1) : e).trim();
      if (key === '' || !/^[A-Za-z0-9._-]+$/.test(tenant)) {
        throw new AenvError('CONFIG_INVALID_VALUE', `bad API key entry for tenant '${tenant}'`, {
          fields: { key: 'gateway.apiKeys' },
        });
      }
      return { digest: digest(key), tenant };
    });
    if (this.#entries.length === 0) {
      throw new AenvError('CONFIG_INVALID_VALUE', 'the gateway needs at least one client API key', {
        fields: { key: 'gateway.apiKeys' },
      });
    }
  }

  /** Keys from the config's list and file. */
  static load(list: readonly string[], file: string | undefined): TenantKeys {
    const fromFile =
      file === undefined
        ? []
        : readFileSync(file, 'utf8')
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => l !== '' && !l.startsWith('#'));
    return new TenantKeys([...list, ...fromFile]);
  }

  /** The tenants the keys belong to. */
  get tenants(): string[] {
    return [...new Set(this.#entries.map((e) => e.tenant))];
  }

  /** The tenant of a bootstrap key, or undefined when `key` is none of them. */
  lookup(key: string): string | undefined {
    const d = digest(key);
    return this.#entries.find((e) => timingSafeEqual(e.digest, d))?.tenant;
  }

  /**
   * The tenant of the `X-API-Key` header.
   * @throws {AenvError} `API_UNAUTHENTICATED`.
   */
  tenantOf(header: string | string[] | undefined): string {
    const given = Array.isArray(header) ? header[0] : header;
    if (given === undefined || given === '') {
      throw new AenvError('API_UNAUTHENTICATED', 'missing API key: send it as X-API-Key');
    }
    const d = digest(given);
    const hit = this.#entries.find((e) => timingSafeEqual(e.digest, d));
    if (hit === undefined) throw new AenvError('API_UNAUTHENTICATED', 'invalid API key');
    return hit.tenant;
  }
}
