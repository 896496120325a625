/**
 * The OpenAPI 3.1 document of the node API, served at `GET /openapi.json`.
 *
 * The document is assembled from per-resource path modules; each path
 * entry mirrors routes of `route-table.ts`, and `openapi.test.ts` fails
 * when a route is missing here or a path here has no route. To add a
 * route: add its entry to the module of its resource (or a new one listed
 * below), with its parameters, body schema and responses.
 *
 * @module
 */
import { ADMIN_PATHS, ADMIN_SCHEMAS } from './admin-paths.js';
import { RESPONSES, SCHEMAS } from './openapi-schemas.js';
import { SANDBOX_PATHS } from './sandbox-paths.js';
import { SNAPSHOT_PATHS } from './snapshot-paths.js';
import { NODE_LIST_PATHS } from './node-paths.js';
import { TEMPLATE_PATHS, TEMPLATE_SCHEMAS } from './template-paths.js';

const NODE_PATHS = {
  '/health': {
    get: {
      operationId: 'health',
      summary: 'The node is up (no API key).',
      tags: ['node'],
      security: [],
      responses: {
        '200': {
          description: 'Up.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } },
        },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'nodeMetrics',
      summary: 'Prometheus metrics of the node (no API key).',
      tags: ['node'],
      security: [],
      responses: {
        '200': {
          description: 'Text exposition format 0.0.4.',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openApiDocument',
      summary: 'This document (no API key).',
      tags: ['node'],
      security: [],
      responses: {
        '200': {
          description: 'OpenAPI 3.1.',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    },
  },
} as const;

/** The version of the API contract (bump when routes or shapes change). */
export const NODE_API_VERSION = '0.1.0';

/** The node API's OpenAPI document (a fresh object each call). */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'aenv node API',
      version: NODE_API_VERSION,
      description:
        "E2B-compatible control plane of an aenv node, plus aenv's extensions. Every error is JSON " +
        '`{code, message, error_code}`. Requests carrying `E2b-Sandbox-Id` (or a `{port}-{id}.{domain}` ' +
        "host) are proxied to the sandbox instead, whatever their path: that data plane is envd's protocol.",
    },
    servers: [{ url: 'http://127.0.0.1:8000' }],
    security: [{ ApiKey: [] }],
    tags: [
      { name: 'sandboxes' },
      { name: 'snapshots' },
      { name: 'templates' },
      { name: 'node' },
      { name: 'admin' },
    ],
    paths: structuredClone({
      ...NODE_PATHS,
      ...NODE_LIST_PATHS,
      ...SANDBOX_PATHS,
      ...SNAPSHOT_PATHS,
      ...TEMPLATE_PATHS,
      ...ADMIN_PATHS,
    }),
    components: structuredClone({
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: { ...SCHEMAS, ...TEMPLATE_SCHEMAS, ...ADMIN_SCHEMAS },
      responses: RESPONSES,
    }),
  };
}
