/**
 * `client.admin`: tenants and their API keys, through the node's (or
 * gateway's) `/admin/...` routes. Only a key with role `admin` may call
 * them; any other key gets {@link PermissionDeniedError}
 * (`TENANT_ADMIN_REQUIRED`). A node without tenant support answers
 * {@link NotSupportedError}.
 *
 * @module
 */
import { expectJson, pathOf, type ApiClient } from '../api/api-client.js';
import type { RequestOptions } from '../api/http.js';
import type {
  ApiKeyView,
  CreateApiKeyBody,
  CreateTenantBody,
  CreatedApiKey,
  TenantQuotasUpdate,
  TenantView,
} from './admin-wire.js';

const feature = 'tenants';

/** Tenant operations. */
export class Tenants {
  readonly #api: ApiClient;

  constructor(api: ApiClient) {
    this.#api = api;
  }

  /** Every tenant, with its quotas and current usage. */
  async list(options: RequestOptions = {}): Promise<TenantView[]> {
    const answer = await this.#api.call({
      ...options,
      method: 'GET',
      path: '/admin/tenants',
      feature,
    });
    return expectJson<TenantView[]>(answer, 'list tenants', true);
  }

  /**
   * Creates a tenant.
   * @throws {ConflictError} `TENANT_EXISTS`; {@link InvalidArgumentError} `TENANT_ID_INVALID`.
   */
  async create(body: CreateTenantBody, options: RequestOptions = {}): Promise<TenantView> {
    const answer = await this.#api.call({
      ...options,
      method: 'POST',
      path: '/admin/tenants',
      body,
      feature,
    });
    return expectJson<TenantView>(answer, 'create tenant');
  }

  /** A tenant with its usage. @throws {NotFoundError} `TENANT_NOT_FOUND` */
  async get(id: string, options: RequestOptions = {}): Promise<TenantView> {
    const answer = await this.#api.call({
      ...options,
      method: 'GET',
      path: pathOf`/admin/tenants/${id}`,
      feature,
    });
    return expectJson<TenantView>(answer, 'get tenant');
  }

  /**
   * Changes the quotas named in `quotas` (`null` or 0 clears one; others stay).
   * @throws {NotFoundError} `TENANT_NOT_FOUND`
   */
  async update(
    id: string,
    quotas: TenantQuotasUpdate,
    options: RequestOptions = {},
  ): Promise<TenantView> {
    const answer = await this.#api.call({
      ...options,
      method: 'PATCH',
      path: pathOf`/admin/tenants/${id}`,
      body: { quotas },
      feature,
    });
    return expectJson<TenantView>(answer, 'update tenant');
  }

  /**
   * Deletes a tenant and revokes its keys.
   * @throws {NotFoundError} `TENANT_NOT_FOUND`; {@link ConflictError} `TENANT_NOT_EMPTY`
   *   while it owns sandboxes.
   */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#api.call({
      ...options,
      method: 'DELETE',
      path: pathOf`/admin/tenants/${id}`,
      feature,
    });
  }
}

/** API-key operations. */
export class ApiKeys {
  readonly #api: ApiClient;

  constructor(api: ApiClient) {
    this.#api = api;
  }

  /** The keys (revoked ones included, oldest first), of one tenant when given. */
  async list(options: RequestOptions & { tenant?: string } = {}): Promise<ApiKeyView[]> {
    const answer = await this.#api.call({
      ...options,
      method: 'GET',
      path: '/admin/keys',
      query: { tenant: options.tenant },
      feature,
    });
    return expectJson<ApiKeyView[]>(answer, 'list API keys', true);
  }

  /**
   * Creates a key for a tenant (role `member` unless given). The answer is
   * the only time the plain key is shown.
   * @throws {NotFoundError} `TENANT_NOT_FOUND`
   */
  async create(body: CreateApiKeyBody, options: RequestOptions = {}): Promise<CreatedApiKey> {
    const answer = await this.#api.call({
      ...options,
      method: 'POST',
      path: '/admin/keys',
      body,
      feature,
    });
    return expectJson<CreatedApiKey>(answer, 'create API key');
  }

  /**
   * Revokes a key: refused from the next request on. Revoking a revoked key
   * is a no-op. @throws {NotFoundError} `API_KEY_NOT_FOUND`
   */
  async revoke(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#api.call({
      ...options,
      method: 'DELETE',
      path: pathOf`/admin/keys/${id}`,
      feature,
    });
  }
}

/** The admin sub-client: `tenants` and `keys`. */
export class Admin {
  /** Tenants: list, create, get, update quotas, delete. */
  readonly tenants: Tenants;
  /** API keys: list, create, revoke. */
  readonly keys: ApiKeys;

  constructor(api: ApiClient) {
    this.tenants = new Tenants(api);
    this.keys = new ApiKeys(api);
  }
}
