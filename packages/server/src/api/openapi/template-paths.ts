/**
 * The OpenAPI `paths` and schemas of templates and images: E2B's template
 * build API (`/v3/templates`, builds, status, files-hash uploads, lists,
 * aliases, delete), aenv's streamed pulls and builds, and AgentENV's cold
 * start (`/sandboxes-cold`).
 *
 * @module
 */
import { jsonContent, ref } from './openapi-schemas.js';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const strList = { type: 'array', items: str } as const;
const strMap = { type: 'object', additionalProperties: str } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

const errors = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  default: { $ref: '#/components/responses/Error' },
} as const;
const badRequest = { $ref: '#/components/responses/BadRequest' } as const;
const notFound = { $ref: '#/components/responses/NotFound' } as const;
const conflict = { $ref: '#/components/responses/Conflict' } as const;

const templateId = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The template id or name.',
  schema: str,
} as const;
const buildId = { name: 'buildID', in: 'path', required: true, schema: str } as const;

const progressStream = {
  description:
    'A progress stream (`application/x-ndjson`): `{"type":"progress", stage, status, phase?, bytes?, totalBytes?, message?}` ' +
    'lines, then `{"type":"result","template": Template}` or `{"type":"error","error": Error}`.',
  content: { 'application/x-ndjson': { schema: ref('ProgressLine') } },
} as const;

/** Schemas of the template paths. */
export const TEMPLATE_SCHEMAS = {
  TemplateBuildRequestV3: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The template name; an existing one is rebuilt.' },
      alias: { type: 'string', deprecated: true },
      tags: { ...strList, description: 'Not supported: must be empty.' },
      cpuCount: int,
      memoryMB: int,
      minFreeDiskMb: int,
    },
  },
  TemplateRequestResponseV3: {
    type: 'object',
    required: ['templateID', 'buildID', 'names', 'aliases', 'tags', 'public'],
    properties: {
      templateID: str,
      buildID: str,
      names: strList,
      aliases: strList,
      tags: strList,
      public: bool,
    },
  },
  TemplateStep: {
    type: 'object',
    required: ['type'],
    properties: {
      type: {
        type: 'string',
        enum: ['RUN', 'ENV', 'ARG', 'WORKDIR', 'USER', 'COPY', 'ADD', 'EXPOSE', 'VOLUME', 'LABEL'],
      },
      args: strList,
      filesHash: str,
      force: { type: 'boolean', description: 'Ignored: every build runs every step.' },
    },
  },
  TemplateBuildStartV2: {
    type: 'object',
    description: 'Exactly one of fromImage and fromTemplate.',
    properties: {
      fromImage: str,
      fromTemplate: str,
      fromImageRegistry: {
        type: 'object',
        description: "Only type 'registry' (credentials come from the node's Docker config).",
      },
      steps: { type: 'array', items: ref('TemplateStep') },
      startCmd: str,
      readyCmd: str,
      force: bool,
    },
  },
  BuildLogEntry: {
    type: 'object',
    required: ['timestamp', 'level', 'message'],
    properties: {
      timestamp: dateTime,
      level: { type: 'string', enum: ['debug', 'info', 'warn', 'error'] },
      message: str,
      step: str,
    },
  },
  TemplateBuildInfo: {
    type: 'object',
    required: ['templateID', 'buildID', 'status', 'logEntries', 'logs'],
    properties: {
      templateID: str,
      buildID: str,
      status: { type: 'string', enum: ['waiting', 'building', 'ready', 'error'] },
      logEntries: { type: 'array', items: ref('BuildLogEntry') },
      logs: strList,
      reason: {
        type: 'object',
        properties: {
          message: str,
          step: { type: 'string', description: '`base`, a step number, or `finalize`.' },
          logEntries: { type: 'array', items: ref('BuildLogEntry') },
        },
      },
    },
  },
  TemplateBuildFileUpload: {
    type: 'object',
    required: ['present'],
    properties: { present: bool, url: str, headers: strMap },
  },
  TemplateWithBuilds: {
    allOf: [
      ref('Template'),
      { type: 'object', properties: { builds: { type: 'array', items: { type: 'object' } } } },
    ],
  },
  TemplateAliasResponse: {
    type: 'object',
    required: ['templateID', 'public'],
    properties: { templateID: str, public: bool },
  },
  PullRequest: {
    type: 'object',
    required: ['image'],
    properties: {
      image: str,
      name: str,
      startCmd: str,
      readyCmd: str,
      cpuCount: int,
      memoryMB: int,
    },
  },
  DockerfileBuild: {
    type: 'object',
    required: ['dockerfile'],
    properties: {
      dockerfile: { type: 'string', description: 'Dockerfile text (no COPY without a context).' },
      name: str,
      cpuCount: int,
      memoryMB: int,
    },
  },
  ProgressLine: {
    type: 'object',
    required: ['type'],
    properties: {
      type: { type: 'string', enum: ['progress', 'result', 'error'] },
      stage: str,
      status: { type: 'string', enum: ['start', 'progress', 'done'] },
      phase: str,
      bytes: int,
      totalBytes: int,
      message: str,
      template: ref('Template'),
      error: ref('Error'),
    },
  },
  NewColdSandbox: {
    allOf: [
      ref('NewSandbox'),
      {
        type: 'object',
        required: ['image'],
        properties: {
          image: {
            type: 'string',
            description: 'An OCI image reference (`ubuntu:24.04`, `registry:5000/app:v1`).',
          },
          cpuCount: { type: 'integer', minimum: 1, maximum: 64 },
          memoryMB: { type: 'integer', minimum: 128 },
          diskSizeMB: { type: 'integer', minimum: 1024, multipleOf: 1024 },
          allowInternetAccess: bool,
        },
      },
    ],
  },
} as const;

const templateList = {
  '200': {
    description: 'Templates, then builds that have none yet.',
    ...jsonContent({ type: 'array', items: ref('Template') }),
  },
  ...errors,
} as const;

/** The template and image paths. */
export const TEMPLATE_PATHS = {
  '/templates': {
    get: {
      operationId: 'listTemplates',
      summary: 'The templates of this node.',
      tags: ['templates'],
      responses: templateList,
    },
  },
  '/v2/templates': {
    get: {
      operationId: 'listTemplatesV2',
      summary: 'The templates of this node (E2B v2).',
      tags: ['templates'],
      responses: templateList,
    },
  },
  '/templates/{id}': {
    parameters: [{ ...templateId, description: 'The template or snapshot id or name.' }],
    get: {
      operationId: 'getTemplate',
      summary: 'A template with its builds.',
      tags: ['templates'],
      responses: {
        '200': { description: 'The template.', ...jsonContent(ref('TemplateWithBuilds')) },
        '404': notFound,
        ...errors,
      },
    },
    delete: {
      operationId: 'deleteTemplate',
      summary:
        "Delete a template (its unfinished builds cancelled) or a snapshot (E2B's deleteSnapshot).",
      tags: ['templates'],
      responses: { '204': { description: 'Deleted.' }, '404': notFound, ...errors },
    },
  },
  '/templates/aliases/{alias}': {
    parameters: [{ name: 'alias', in: 'path', required: true, schema: str }],
    get: {
      operationId: 'getTemplateAlias',
      summary: 'The template a name points at.',
      tags: ['templates'],
      responses: {
        '200': { description: 'The template id.', ...jsonContent(ref('TemplateAliasResponse')) },
        '404': notFound,
        ...errors,
      },
    },
  },
  '/v3/templates': {
    post: {
      operationId: 'requestTemplateBuild',
      summary: 'Reserve a build of a new template, or a rebuild of a named one.',
      tags: ['templates'],
      requestBody: { required: true, ...jsonContent(ref('TemplateBuildRequestV3')) },
      responses: {
        '202': {
          description: 'The template and build ids.',
          ...jsonContent(ref('TemplateRequestResponseV3')),
        },
        '400': badRequest,
        '409': conflict,
        ...errors,
      },
    },
  },
  '/v2/templates/{id}/builds/{buildID}': {
    parameters: [templateId, buildId],
    post: {
      operationId: 'startTemplateBuild',
      summary: 'Start a reserved build (runs in the background; poll its status).',
      tags: ['templates'],
      requestBody: { required: true, ...jsonContent(ref('TemplateBuildStartV2')) },
      responses: {
        '202': { description: 'Started.' },
        '400': badRequest,
        '404': notFound,
        '409': conflict,
        ...errors,
      },
    },
  },
  '/templates/{id}/builds/{buildID}/status': {
    parameters: [templateId, buildId],
    get: {
      operationId: 'getTemplateBuildStatus',
      summary: 'A build: status, log entries from an offset, the failing step.',
      tags: ['templates'],
      parameters: [{ name: 'logsOffset', in: 'query', schema: { type: 'integer', minimum: 0 } }],
      responses: {
        '200': { description: 'The build.', ...jsonContent(ref('TemplateBuildInfo')) },
        '404': notFound,
        ...errors,
      },
    },
  },
  '/templates/{id}/files/{hash}': {
    parameters: [templateId, { name: 'hash', in: 'path', required: true, schema: str }],
    get: {
      operationId: 'getTemplateFilesUpload',
      summary: "Whether a COPY's files are on the node, else where to upload them.",
      tags: ['templates'],
      responses: {
        '201': {
          description: 'Present, or the upload URL.',
          ...jsonContent(ref('TemplateBuildFileUpload')),
        },
        '400': badRequest,
        ...errors,
      },
    },
    put: {
      operationId: 'uploadTemplateFiles',
      summary: "Upload a COPY's files: a tar (gzip allowed) of the paths it names.",
      tags: ['templates'],
      requestBody: {
        required: true,
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      responses: { '204': { description: 'Stored.' }, '400': badRequest, ...errors },
    },
  },
  '/templates/pull': {
    post: {
      operationId: 'pullTemplate',
      summary: 'Make a template of an OCI image (aenv), with progress.',
      tags: ['templates'],
      requestBody: { required: true, ...jsonContent(ref('PullRequest')) },
      responses: { '200': progressStream, '400': badRequest, ...errors },
    },
  },
  '/templates/build': {
    post: {
      operationId: 'buildTemplate',
      summary:
        'Build a template from a Dockerfile (aenv), with progress; the body is JSON, or the build context as a tar.',
      tags: ['templates'],
      parameters: [
        {
          name: 'dockerfile',
          in: 'query',
          description: 'Path of the Dockerfile in the context (default Dockerfile).',
          schema: str,
        },
        { name: 'name', in: 'query', schema: str },
        { name: 'cpuCount', in: 'query', schema: int },
        { name: 'memoryMB', in: 'query', schema: int },
      ],
      requestBody: {
        required: true,
        content: {
          ...jsonContent(ref('DockerfileBuild')).content,
          'application/x-tar': { schema: { type: 'string', format: 'binary' } },
        },
      },
      responses: { '200': progressStream, '400': badRequest, ...errors },
    },
  },
  '/sandboxes-cold': {
    post: {
      operationId: 'coldStartSandbox',
      summary:
        'Create a sandbox straight from an OCI image (pulled and converted on a miss; a boot).',
      tags: ['sandboxes'],
      requestBody: { required: true, ...jsonContent(ref('NewColdSandbox')) },
      responses: {
        '201': { description: 'The sandbox.', ...jsonContent(ref('Sandbox')) },
        '400': badRequest,
        ...errors,
      },
    },
  },
} as const;
