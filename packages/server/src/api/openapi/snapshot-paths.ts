/**
 * The OpenAPI `paths` of snapshots (E2B's shapes, plus aenv's
 * `GET`/`DELETE /snapshots/{id}`). A snapshot id or name is accepted as
 * `templateID` on create.
 *
 * @module
 */
import { jsonContent, ref, SANDBOX_ID_PARAMETER } from './openapi-schemas.js';

const errors = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  default: { $ref: '#/components/responses/Error' },
} as const;
const notFound = { $ref: '#/components/responses/NotFound' } as const;

const snapshotId = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The snapshot id or name.',
  schema: { type: 'string' },
} as const;

const deleted = { '204': { description: 'Deleted.' }, '404': notFound, ...errors } as const;

/** The snapshot paths. */
export const SNAPSHOT_PATHS = {
  '/sandboxes/{id}/snapshots': {
    parameters: [SANDBOX_ID_PARAMETER],
    post: {
      operationId: 'createSnapshot',
      summary: 'Capture a running sandbox (memory and disk); it keeps running.',
      tags: ['snapshots'],
      requestBody: { required: false, ...jsonContent(ref('NewSnapshot')) },
      responses: {
        '201': { description: 'The snapshot.', ...jsonContent(ref('SnapshotCreated')) },
        '400': { $ref: '#/components/responses/BadRequest' },
        '404': notFound,
        '409': { $ref: '#/components/responses/Conflict' },
        ...errors,
      },
    },
  },
  '/snapshots': {
    get: {
      operationId: 'listSnapshots',
      summary: 'List snapshots, filtered and paged.',
      tags: ['snapshots'],
      parameters: [
        { name: 'sandboxID', in: 'query', schema: { type: 'string' } },
        { name: 'name', in: 'query', schema: { type: 'string' } },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
        { name: 'nextToken', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: 'The snapshots; `x-next-token` when more pages exist.',
          headers: { 'x-next-token': { schema: { type: 'string' } } },
          ...jsonContent({ type: 'array', items: ref('SnapshotInfo') }),
        },
        ...errors,
      },
    },
  },
  '/snapshots/{id}': {
    parameters: [snapshotId],
    get: {
      operationId: 'getSnapshot',
      summary: 'A snapshot (aenv).',
      tags: ['snapshots'],
      responses: {
        '200': { description: 'The snapshot.', ...jsonContent(ref('SnapshotInfo')) },
        '404': notFound,
        ...errors,
      },
    },
    delete: {
      operationId: 'deleteSnapshot',
      summary: 'Delete a snapshot (kept on disk while sandboxes still use it).',
      tags: ['snapshots'],
      responses: deleted,
    },
  },
} as const;
