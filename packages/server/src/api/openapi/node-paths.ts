/**
 * The OpenAPI `paths` of nodes: `GET /nodes` and `GET /nodes/{id}`. A node
 * lists itself; a gateway (`packages/control-plane`) lists every node of
 * its cluster in the same shape and adds `POST /nodes/{id}` (drain).
 *
 * @module
 */
import { jsonContent } from './openapi-schemas.js';

const errors = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  default: { $ref: '#/components/responses/Error' },
} as const;

/** `NodeView` (`@aenv/shared` `cluster-wire.ts`). */
const NODE_SCHEMA = {
  type: 'object',
  required: ['nodeID', 'status', 'sandboxCount'],
  properties: {
    nodeID: { type: 'string' },
    id: { type: 'string' },
    url: { type: 'string' },
    status: { type: 'string', enum: ['ready', 'draining', 'lost'] },
    version: { type: 'string' },
    driver: { type: 'string' },
    mode: { type: 'string' },
    sandboxCount: { type: 'integer', description: 'Sandboxes with a machine.' },
    sandboxPausedCount: { type: 'integer' },
    sandboxStartingCount: { type: 'integer' },
    cpuCount: { type: 'integer' },
    memoryMB: { type: 'integer' },
    capacity: { type: 'object', additionalProperties: { type: 'integer' } },
    usage: { type: 'object', additionalProperties: { type: 'integer' } },
    templates: { type: 'array', items: { type: 'string' } },
    startedAt: { type: 'string', format: 'date-time' },
    heartbeatAt: { type: 'string', format: 'date-time' },
  },
} as const;

/** The node paths. */
export const NODE_LIST_PATHS = {
  '/nodes': {
    get: {
      operationId: 'listNodes',
      summary: 'This node (a gateway: every node of the cluster) with capacity and usage.',
      tags: ['node'],
      responses: {
        '200': {
          description: 'The nodes.',
          ...jsonContent({ type: 'array', items: NODE_SCHEMA }),
        },
        ...errors,
      },
    },
  },
  '/nodes/{id}': {
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The node id.',
        schema: { type: 'string' },
      },
    ],
    get: {
      operationId: 'getNode',
      summary: 'One node.',
      tags: ['node'],
      responses: {
        '200': { description: 'The node.', ...jsonContent(NODE_SCHEMA) },
        '404': { $ref: '#/components/responses/NotFound' },
        ...errors,
      },
    },
  },
} as const;
