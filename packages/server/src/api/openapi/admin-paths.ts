/**
 * The OpenAPI `paths` and schemas of the admin API (`/admin/tenants`,
 * `/admin/keys`): role `admin` keys only (403 `TENANT_ADMIN_REQUIRED`
 * otherwise). Shapes are `@aenv/shared`'s `tenant-wire.ts`.
 *
 * @module
 */
import { jsonContent } from './openapi-schemas.js';

const ref = (name: string): { $ref: string } => ({ $ref: `#/components/schemas/${name}` });

const errors = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  '403': { description: 'The key is not an admin key.', ...jsonContent(ref('Error')) },
  default: { $ref: '#/components/responses/Error' },
} as const;

const quotaProps = {
  maxSandboxes: { type: 'integer', minimum: 0, description: 'Sandboxes at once (0 = no limit).' },
  maxVcpus: { type: 'integer', minimum: 0, description: 'vCPUs of running sandboxes.' },
  maxMemoryMB: { type: 'integer', minimum: 0, description: 'Memory of running sandboxes, MiB.' },
  createsPerSecond: {
    type: 'number',
    minimum: 0,
    description: 'Creates per second (burst max(1, rate)).',
  },
} as const;

/** Schemas of the admin API. */
export const ADMIN_SCHEMAS = {
  TenantQuotas: { type: 'object', properties: quotaProps },
  Tenant: {
    type: 'object',
    required: ['id', 'quotas', 'createdAt'],
    properties: {
      id: { type: 'string' },
      quotas: ref('TenantQuotas'),
      createdAt: { type: 'string', format: 'date-time' },
      usage: {
        type: 'object',
        properties: {
          sandboxes: { type: 'integer' },
          vcpus: { type: 'integer' },
          memoryMB: { type: 'integer' },
        },
      },
    },
  },
  NewTenant: {
    type: 'object',
    required: ['id'],
    properties: {
      id: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' },
      quotas: ref('TenantQuotas'),
    },
  },
  TenantUpdate: {
    type: 'object',
    required: ['quotas'],
    properties: {
      quotas: {
        type: 'object',
        description: 'The quotas named replace the old ones; null or 0 clears one.',
        additionalProperties: { type: ['number', 'null'] },
      },
    },
  },
  ApiKey: {
    type: 'object',
    required: ['id', 'tenant', 'name', 'role', 'prefix', 'createdAt'],
    properties: {
      id: { type: 'string' },
      tenant: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string', enum: ['admin', 'member'] },
      prefix: { type: 'string', description: 'The first characters of the key.' },
      createdAt: { type: 'string', format: 'date-time' },
      revokedAt: { type: 'string', format: 'date-time' },
    },
  },
  CreatedApiKey: {
    allOf: [
      ref('ApiKey'),
      {
        type: 'object',
        required: ['key'],
        properties: { key: { type: 'string', description: 'Shown only here.' } },
      },
    ],
  },
  NewApiKey: {
    type: 'object',
    required: ['tenant'],
    properties: {
      tenant: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string', enum: ['admin', 'member'], default: 'member' },
    },
  },
} as const;

const tenantIdParameter = {
  name: 'tenantId',
  in: 'path',
  required: true,
  description: 'The tenant id.',
  schema: { type: 'string' },
} as const;

const tenantPaths = {
  '/admin/tenants': {
    get: {
      operationId: 'listTenants',
      summary: 'Every tenant with its quotas and usage.',
      tags: ['admin'],
      responses: {
        '200': {
          description: 'The tenants.',
          ...jsonContent({ type: 'array', items: ref('Tenant') }),
        },
        ...errors,
      },
    },
    post: {
      operationId: 'createTenant',
      summary: 'Creates a tenant.',
      tags: ['admin'],
      requestBody: { required: true, ...jsonContent(ref('NewTenant')) },
      responses: {
        '201': { description: 'Created.', ...jsonContent(ref('Tenant')) },
        '409': { description: 'TENANT_EXISTS.', ...jsonContent(ref('Error')) },
        ...errors,
      },
    },
  },
  '/admin/tenants/{tenantId}': {
    parameters: [tenantIdParameter],
    get: {
      operationId: 'getTenant',
      summary: 'One tenant.',
      tags: ['admin'],
      responses: {
        '200': { description: 'The tenant.', ...jsonContent(ref('Tenant')) },
        '404': { $ref: '#/components/responses/NotFound' },
        ...errors,
      },
    },
    patch: {
      operationId: 'updateTenant',
      summary: "Changes a tenant's quotas.",
      tags: ['admin'],
      requestBody: { required: true, ...jsonContent(ref('TenantUpdate')) },
      responses: {
        '200': { description: 'The tenant.', ...jsonContent(ref('Tenant')) },
        '404': { $ref: '#/components/responses/NotFound' },
        ...errors,
      },
    },
    delete: {
      operationId: 'deleteTenant',
      summary: 'Deletes a tenant that owns no sandboxes; its keys are revoked.',
      tags: ['admin'],
      responses: {
        '204': { description: 'Deleted.' },
        '404': { $ref: '#/components/responses/NotFound' },
        '409': { description: 'TENANT_NOT_EMPTY.', ...jsonContent(ref('Error')) },
        ...errors,
      },
    },
  },
} as const;

const keyPaths = {
  '/admin/keys': {
    get: {
      operationId: 'listApiKeys',
      summary: 'API keys (never the keys themselves), revoked ones included.',
      tags: ['admin'],
      parameters: [{ name: 'tenant', in: 'query', required: false, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: 'The keys.',
          ...jsonContent({ type: 'array', items: ref('ApiKey') }),
        },
        ...errors,
      },
    },
    post: {
      operationId: 'createApiKey',
      summary: 'Creates a key; the answer is the only time it is shown.',
      tags: ['admin'],
      requestBody: { required: true, ...jsonContent(ref('NewApiKey')) },
      responses: {
        '201': { description: 'Created.', ...jsonContent(ref('CreatedApiKey')) },
        '404': { $ref: '#/components/responses/NotFound' },
        ...errors,
      },
    },
  },
  '/admin/keys/{keyId}': {
    parameters: [
      {
        name: 'keyId',
        in: 'path',
        required: true,
        description: 'The key id.',
        schema: { type: 'string' },
      },
    ],
    delete: {
      operationId: 'revokeApiKey',
      summary: 'Revokes a key; refused from the next request on.',
      tags: ['admin'],
      responses: {
        '204': { description: 'Revoked.' },
        '404': { $ref: '#/components/responses/NotFound' },
        ...errors,
      },
    },
  },
} as const;

/** The admin paths. */
export const ADMIN_PATHS = { ...tenantPaths, ...keyPaths } as const;
