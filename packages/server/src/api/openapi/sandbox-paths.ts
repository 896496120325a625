/**
 * The OpenAPI `paths` of the sandbox routes (E2B's control plane plus
 * aenv's extensions). Each entry mirrors one line of `route-table.ts`;
 * `openapi.test.ts` keeps the two equal.
 *
 * @module
 */
import {
  IDEMPOTENCY_KEY_PARAMETER,
  jsonContent,
  ref,
  SANDBOX_ID_PARAMETER,
} from './openapi-schemas.js';

const errors = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  default: { $ref: '#/components/responses/Error' },
} as const;
const byId = { parameters: [SANDBOX_ID_PARAMETER] } as const;
const notFound = { $ref: '#/components/responses/NotFound' } as const;
const conflict = { $ref: '#/components/responses/Conflict' } as const;
const badRequest = { $ref: '#/components/responses/BadRequest' } as const;
const noContent = { description: 'Done.' } as const;

function body(schema: string, required = false): object {
  return { required, ...jsonContent(ref(schema)) };
}

function created(description: string): object {
  return { description, ...jsonContent(ref('Sandbox')) };
}

const listQuery = [
  {
    name: 'state',
    in: 'query',
    schema: { type: 'string' },
    description: 'running,paused (default both)',
  },
  {
    name: 'metadata',
    in: 'query',
    schema: { type: 'string' },
    description: 'k=v&k2=v2, each part percent-encoded',
  },
  { name: 'template', in: 'query', schema: { type: 'string' } },
  { name: 'startedAfter', in: 'query', schema: { type: 'string', format: 'date-time' } },
  { name: 'order', in: 'query', schema: { type: 'string', enum: ['asc', 'desc'] } },
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
  { name: 'nextToken', in: 'query', schema: { type: 'string' } },
];

const listAnswer = {
  description: 'The sandboxes; `x-next-token` when more pages exist.',
  headers: { 'x-next-token': { schema: { type: 'string' } } },
  ...jsonContent({ type: 'array', items: ref('ListedSandbox') }),
};

function create(operationId: string, summary: string): object {
  return {
    post: {
      operationId,
      summary,
      tags: ['sandboxes'],
      parameters: [IDEMPOTENCY_KEY_PARAMETER],
      requestBody: body('NewSandbox', true),
      responses: {
        '201': created('The sandbox, once envd answers.'),
        '400': badRequest,
        ...errors,
      },
    },
  };
}

function connect(operationId: string, summary: string): object {
  return {
    ...byId,
    post: {
      operationId,
      summary,
      tags: ['sandboxes'],
      requestBody: body('ConnectSandbox'),
      responses: {
        '200': created('It was running; its TTL was extended if the new one reaches further.'),
        '201': created('It was paused and has been resumed.'),
        '404': notFound,
        ...errors,
      },
    },
  };
}

/** The sandbox paths. */
export const SANDBOX_PATHS = {
  '/sandboxes': {
    ...create('createSandboxV1', 'Create a sandbox (E2B v1; default TTL 15 s).'),
    get: {
      operationId: 'listSandboxesV1',
      summary: 'List running sandboxes (E2B 1.x clients).',
      tags: ['sandboxes'],
      parameters: [listQuery[1]],
      responses: { '200': listAnswer, ...errors },
    },
  },
  '/v2/sandboxes': {
    ...create('createSandbox', 'Create a sandbox from a template or snapshot (a restore).'),
    get: {
      operationId: 'listSandboxes',
      summary: 'List sandboxes, filtered and paged.',
      tags: ['sandboxes'],
      parameters: listQuery,
      responses: { '200': listAnswer, '400': badRequest, ...errors },
    },
  },
  '/sandboxes/{id}': {
    ...byId,
    get: {
      operationId: 'getSandbox',
      summary: 'A sandbox with its network and lifecycle settings.',
      tags: ['sandboxes'],
      responses: {
        '200': { description: 'The sandbox.', ...jsonContent(ref('SandboxDetail')) },
        '404': notFound,
        ...errors,
      },
    },
    delete: {
      operationId: 'killSandbox',
      summary: 'Kill a sandbox (running or paused).',
      tags: ['sandboxes'],
      responses: { '204': noContent, '404': notFound, ...errors },
    },
  },
  '/sandboxes/{id}/timeout': {
    ...byId,
    post: {
      operationId: 'setSandboxTimeout',
      summary: 'Set the TTL to `timeout` seconds from now (may shorten it).',
      tags: ['sandboxes'],
      requestBody: body('Timeout', true),
      responses: { '204': noContent, '400': badRequest, '404': notFound, ...errors },
    },
  },
  '/sandboxes/{id}/refreshes': {
    ...byId,
    post: {
      operationId: 'refreshSandbox',
      summary: 'Keep a running sandbox alive `duration` more seconds (never shortens).',
      tags: ['sandboxes'],
      requestBody: body('Refresh'),
      responses: { '204': noContent, '404': notFound, '409': conflict, ...errors },
    },
  },
  '/sandboxes/{id}/network': {
    ...byId,
    put: {
      operationId: 'updateSandboxNetwork',
      summary: 'Replace the egress policy atomically.',
      tags: ['sandboxes'],
      requestBody: body('NetworkUpdate', true),
      responses: { '204': noContent, '400': badRequest, '404': notFound, ...errors },
    },
  },
  '/sandboxes/{id}/connect': connect('connectSandboxV1', 'Connect (E2B v1): extend or resume.'),
  '/v2/sandboxes/{id}/connect': connect(
    'connectSandbox',
    'Connect: extend a running sandbox or resume a paused one.',
  ),
  '/sandboxes/{id}/resume': {
    ...byId,
    post: {
      operationId: 'resumeSandbox',
      summary: 'Resume a paused sandbox (E2B 2.0-2.5 clients).',
      tags: ['sandboxes'],
      requestBody: body('ConnectSandbox'),
      responses: { '201': created('Resumed.'), '404': notFound, '409': conflict, ...errors },
    },
  },
  '/sandboxes/{id}/pause': {
    ...byId,
    post: {
      operationId: 'pauseSandbox',
      summary: 'Pause a running sandbox: memory and disk kept, machine released.',
      tags: ['sandboxes'],
      requestBody: body('Pause'),
      responses: { '204': noContent, '404': notFound, '409': conflict, ...errors },
    },
  },
  '/sandboxes/{id}/fork': {
    ...byId,
    post: {
      operationId: 'forkSandbox',
      summary: 'Fork a running sandbox: one checkpoint, `count` copy-on-write children.',
      tags: ['sandboxes'],
      parameters: [IDEMPOTENCY_KEY_PARAMETER],
      requestBody: body('Fork'),
      responses: {
        '201': {
          description: 'One entry per child; each succeeds or fails on its own.',
          ...jsonContent({ type: 'array', items: ref('ForkResult') }),
        },
        '400': badRequest,
        '404': notFound,
        '409': conflict,
        ...errors,
      },
    },
  },
  '/sandboxes/{id}/metrics': {
    ...byId,
    get: {
      operationId: 'getSandboxMetrics',
      summary: "The sandbox's resource use over time (E2B's SandboxMetric; possibly empty).",
      tags: ['sandboxes'],
      parameters: [
        {
          name: 'start',
          in: 'query',
          schema: { type: 'integer', minimum: 0 },
          description: 'Unix seconds',
        },
        {
          name: 'end',
          in: 'query',
          schema: { type: 'integer', minimum: 0 },
          description: 'Unix seconds',
        },
      ],
      responses: {
        '200': {
          description: 'Samples.',
          ...jsonContent({ type: 'array', items: ref('SandboxMetric') }),
        },
        '404': notFound,
        ...errors,
      },
    },
  },
  '/sandboxes/{id}/logs': {
    ...byId,
    get: {
      operationId: 'getSandboxLogs',
      summary: "The tail of the sandbox's VM console (aenv extension).",
      description:
        'Kernel and init messages of the current machine; empty while the sandbox is paused (its machine is gone).',
      tags: ['sandboxes'],
      parameters: [
        {
          name: 'lines',
          in: 'query',
          description: 'How many last lines (default 200, at most 10000).',
          schema: { type: 'integer', minimum: 1, maximum: 10000 },
        },
      ],
      responses: {
        '200': {
          description: 'Console text.',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        '404': notFound,
        ...errors,
      },
    },
  },
} as const;
