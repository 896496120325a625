/**
 * The `components` of the node's OpenAPI document: the JSON shapes the
 * routes read and write (E2B's names where E2B has the shape), and the
 * shared responses and parameters.
 *
 * @module
 */

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const strMap = { type: 'object', additionalProperties: { type: 'string' } } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const strList = { type: 'array', items: { type: 'string' } } as const;

/** `#/components/schemas/<name>` */
export function ref(name: string): { $ref: string } {
  return { $ref: `#/components/schemas/${name}` };
}

/** A JSON request or response body of a schema. */
export function jsonContent(schema: object): {
  content: { 'application/json': { schema: object } };
} {
  return { content: { 'application/json': { schema } } };
}

const network = {
  type: 'object',
  description: 'Egress policy: CIDRs or addresses always allowed / denied.',
  properties: {
    allowOut: strList,
    denyOut: strList,
    allowPublicTraffic: bool,
    maskRequestHost: str,
  },
};

const listedSandbox = {
  type: 'object',
  required: [
    'templateID',
    'sandboxID',
    'clientID',
    'startedAt',
    'endAt',
    'cpuCount',
    'memoryMB',
    'diskSizeMB',
    'state',
    'envdVersion',
  ],
  properties: {
    templateID: str,
    alias: str,
    sandboxID: str,
    clientID: { type: 'string', description: 'Always "" (the Python SDK reads it).' },
    startedAt: dateTime,
    endAt: dateTime,
    cpuCount: int,
    memoryMB: int,
    diskSizeMB: int,
    metadata: strMap,
    state: { type: 'string', enum: ['running', 'paused'] },
    envdVersion: str,
    failureReason: {
      type: 'string',
      description: 'aenv: present when the sandbox failed (VMM exited, lost in a node crash): why.',
    },
  },
};

/** Every schema of the document. */
export const SCHEMAS = {
  Error: {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: { type: 'integer', description: 'The HTTP status, repeated.' },
      message: str,
      error_code: { type: 'string', description: 'The stable aenv code (docs/errors.md).' },
    },
  },
  NewSandbox: {
    type: 'object',
    required: ['templateID'],
    properties: {
      templateID: { type: 'string', description: 'Template id or alias, or a snapshot id.' },
      timeout: {
        type: 'integer',
        minimum: 0,
        description: 'TTL in seconds (v1 default 15, v2 300).',
      },
      metadata: strMap,
      envVars: strMap,
      secure: {
        type: 'boolean',
        default: true,
        description: 'Require envdAccessToken on envd calls (default true; false opts out).',
      },
      allow_internet_access: bool,
      autoPause: { type: 'boolean', description: 'At TTL expiry: true pauses, false kills.' },
      autoPauseMemory: bool,
      autoResume: { type: 'object', properties: { enabled: bool } },
      network,
    },
  },
  Sandbox: {
    type: 'object',
    required: ['sandboxID', 'templateID', 'clientID', 'envdVersion'],
    properties: {
      sandboxID: str,
      templateID: str,
      alias: str,
      clientID: str,
      envdVersion: str,
      envdAccessToken: str,
      trafficAccessToken: { type: ['string', 'null'] },
      domain: { type: ['string', 'null'] },
    },
  },
  ListedSandbox: listedSandbox,
  SandboxDetail: {
    allOf: [
      ref('ListedSandbox'),
      {
        type: 'object',
        properties: {
          domain: { type: ['string', 'null'] },
          envdAccessToken: str,
          allowInternetAccess: bool,
          network,
          lifecycle: {
            type: 'object',
            properties: {
              onTimeout: { type: 'string', enum: ['pause', 'kill'] },
              autoResume: bool,
            },
          },
        },
      },
    ],
  },
  ConnectSandbox: {
    type: 'object',
    properties: {
      timeout: {
        type: 'integer',
        minimum: 0,
        description: 'Seconds; required by v1, default 300 in v2.',
      },
    },
  },
  Timeout: {
    type: 'object',
    required: ['timeout'],
    properties: { timeout: { type: 'integer', minimum: 0 } },
  },
  Refresh: {
    type: 'object',
    properties: { duration: { type: 'integer', minimum: 0, description: 'Seconds (default 60).' } },
  },
  Pause: {
    type: 'object',
    properties: { memory: { type: 'boolean', description: 'false keeps only the disk.' } },
  },
  NetworkUpdate: {
    type: 'object',
    properties: { allowOut: strList, denyOut: strList, allow_internet_access: bool },
  },
  Health: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } },
  Fork: {
    type: 'object',
    properties: {
      count: { type: 'integer', minimum: 1, maximum: 100, description: 'Children (default 1).' },
      timeout: { type: 'integer', minimum: 0, description: "The children's TTL in seconds." },
      metadata: strMap,
    },
  },
  ForkResult: {
    type: 'object',
    description: 'One child: the sandbox, or the error it failed with.',
    properties: { sandbox: ref('Sandbox'), error: ref('Error') },
  },
  Template: {
    type: 'object',
    required: ['templateID', 'aliases', 'cpuCount', 'memoryMB', 'diskSizeMB', 'createdAt'],
    properties: {
      templateID: str,
      aliases: strList,
      cpuCount: int,
      memoryMB: int,
      diskSizeMB: int,
      createdAt: dateTime,
      buildStatus: str,
      public: bool,
    },
  },
  NewSnapshot: { type: 'object', properties: { name: str } },
  SnapshotCreated: {
    type: 'object',
    required: ['snapshotID', 'names'],
    properties: { snapshotID: str, names: strList },
  },
  SnapshotInfo: {
    type: 'object',
    required: ['snapshotID', 'names', 'templateID', 'createdAt'],
    properties: {
      snapshotID: str,
      names: strList,
      sandboxID: str,
      templateID: str,
      createdAt: dateTime,
      lineage: { ...strList, description: 'Snapshot ids from the oldest ancestor to this one.' },
    },
  },
  SandboxMetric: {
    type: 'object',
    required: [
      'timestamp',
      'timestampUnix',
      'cpuCount',
      'cpuUsedPct',
      'memUsed',
      'memTotal',
      'memCache',
      'diskUsed',
      'diskTotal',
    ],
    properties: {
      timestamp: dateTime,
      timestampUnix: int,
      cpuCount: int,
      cpuUsedPct: { type: 'number' },
      memUsed: int,
      memTotal: int,
      memCache: int,
      diskUsed: int,
      diskTotal: int,
    },
  },
} as const;

/** Shared responses. */
export const RESPONSES = {
  BadRequest: {
    description: 'Malformed request; the message names the field.',
    ...jsonContent(ref('Error')),
  },
  Unauthorized: { description: 'Missing or wrong X-API-Key.', ...jsonContent(ref('Error')) },
  NotFound: { description: 'No such sandbox (or snapshot).', ...jsonContent(ref('Error')) },
  Conflict: { description: 'The sandbox state does not allow this.', ...jsonContent(ref('Error')) },
  Error: { description: 'Any other error.', ...jsonContent(ref('Error')) },
} as const;

/** The `Idempotency-Key` header of idempotent routes (create, fork). */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A retried request with the same key gets the first answer instead of acting again (kept a day; failures are not kept).',
  schema: { type: 'string', maxLength: 255 },
} as const;

/** The `{id}` path parameter. */
export const SANDBOX_ID_PARAMETER = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The sandbox id.',
  schema: { type: 'string' },
} as const;
