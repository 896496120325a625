/**
 * Who a request is: the node's API keys, turned into a {@link Principal}.
 *
 * Client keys live hashed in the node database (`store/tenant-store.ts`),
 * each belonging to one tenant with a role. `$AENV_HOME/api-key` (0600) is
 * the local CLI's copy of the first admin key of tenant `default`, like a
 * kubeconfig: on a node's first start (no key recorded yet) the key in it
 * (or a new one, written there) is imported as that key; the server reads
 * the file only then. Revoking any key, this one included, takes effect on
 * the next request.
 *
 * The cluster key (`cluster.apiKey`, compared in constant time) is the
 * cluster principal: with `x-aenv-tenant` it acts as that tenant (a
 * member); without it, it is the operator view (all tenants, admin). The
 * header is ignored on every other key.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';
import {
  AenvError,
  DEFAULT_TENANT,
  TENANT_HEADER,
  hashApiKey,
  newApiKey,
  parseTenantId,
  type ApiKeyRole,
} from '@aenv/shared';
import type { TenantStore } from '../store/tenant-store.js';

/** Who a request acts as. */
export interface Principal {
  /** The tenant acted for; `undefined` = every tenant (the cluster key's operator view). */
  readonly tenant: string | undefined;
  readonly role: ApiKeyRole;
  /** The key's id (`cluster` for the cluster key). */
  readonly keyId: string;
}

/** The key id the cluster principal carries. */
export const CLUSTER_KEY_ID = 'cluster';

/** Authenticates `X-API-Key` against the node's key store and the cluster key. */
export class ApiKeys {
  readonly #store: TenantStore;
  readonly #cluster: readonly Buffer[];

  constructor(store: TenantStore, clusterKeys: readonly string[] = []) {
    this.#store = store;
    this.#cluster = clusterKeys.map((k) => Buffer.from(hashApiKey(k), 'hex'));
  }

  /**
   * Opens the key store; on a first start creates tenant `default` and
   * imports the key file's key (creating the file, 0600, when absent) as its
   * admin key.
   * @returns the keys, the local key (so the daemon can say where it is) and
   *   whether the file was created now.
   */
  static open(
    store: TenantStore,
    path: string,
    clusterKeys: readonly string[] = [],
  ): { keys: ApiKeys; key: string; created: boolean } {
    const { key, created } = loadOrCreateKeyFile(path);
    if (store.keyCount() === 0) {
      if (store.findTenant(DEFAULT_TENANT) === undefined) store.createTenant(DEFAULT_TENANT);
      store.createKey({ tenant: DEFAULT_TENANT, name: 'local', role: 'admin', key });
    }
    return { keys: new ApiKeys(store, clusterKeys), key, created };
  }

  /**
   * The principal of a request's headers.
   * @throws {AenvError} `API_UNAUTHENTICATED`; `TENANT_ID_INVALID` (a bad tenant header).
   */
  authenticate(headers: IncomingHttpHeaders): Principal {
    const given = first(headers['x-api-key']);
    if (given === undefined || given === '') {
      throw new AenvError('API_UNAUTHENTICATED', 'missing API key: send it as X-API-Key');
    }
    if (this.#isCluster(given)) {
      const tenant = first(headers[TENANT_HEADER]);
      return tenant === undefined || tenant === ''
        ? { tenant: undefined, role: 'admin', keyId: CLUSTER_KEY_ID }
        : { tenant: parseTenantId(tenant), role: 'member', keyId: CLUSTER_KEY_ID };
    }
    const found = this.#store.findKey(given);
    if (found === undefined) throw new AenvError('API_UNAUTHENTICATED', 'invalid API key');
    return { tenant: found.tenant, role: found.role, keyId: found.id };
  }

  /**
   * Checks one key (the dashboard's login and every dashboard request).
   * @throws {AenvError} `API_UNAUTHENTICATED`.
   */
  check(key: string | string[] | undefined): Principal {
    return this.authenticate({ 'x-api-key': key });
  }

  #isCluster(key: string): boolean {
    if (this.#cluster.length === 0) return false;
    const d = Buffer.from(hashApiKey(key), 'hex');
    return this.#cluster.some((k) => timingSafeEqual(k, d));
  }
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Reads the local key file, creating it (0600, directory 0700) with a new key when absent. */
function loadOrCreateKeyFile(path: string): { key: string; created: boolean } {
  try {
    const key = readFileSync(path, 'utf8').trim();
    if (key !== '') return { key, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = newApiKey();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'w' });
  chmodSync(path, 0o600);
  return { key, created: true };
}
