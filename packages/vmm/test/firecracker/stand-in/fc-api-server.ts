/**
 * The stand-in's HTTP API server on a unix socket (test code): every
 * request is matched to an operation of the spec, its body validated
 * against the spec's schema (unknown fields rejected), then handed to the
 * model; answers are `204`, `200` with JSON, or `400` with
 * `{"fault_message": ...}` as Firecracker gives them. Each request is
 * recorded (operation, body, status, fault) for the contract test.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Answer } from './fc-core.js';
import type { FcModel } from './fc-model.js';
import type { MatchedOperation, SpecValidator } from './spec-validator.js';

/** One request as the contract test sees it. */
export interface RequestRecord {
  readonly pid: number;
  readonly operationId: string | null;
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly status: number;
  readonly fault?: string;
  /** Set when the request broke the spec (as opposed to a state rule). */
  readonly specErrors?: readonly string[];
}

const MAX_BODY = 51_200; // Firecracker's default API payload limit

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY)
      throw new Error(
        `Request payload with size ${size} is larger than the limit of ${MAX_BODY} allowed by server.`,
      );
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function answer(res: ServerResponse, a: Answer): void {
  if (a.body === undefined) {
    res.writeHead(a.status).end();
    return;
  }
  const text = JSON.stringify(a.body);
  res
    .writeHead(a.status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
    })
    .end(text);
}

/** What is wrong with a request's body, by the spec. */
function bodyErrors(spec: SpecValidator, op: MatchedOperation, body: unknown): string[] {
  if (body === undefined) return op.bodyRequired ? ['body: required by the spec, none sent'] : [];
  if (op.bodySchema === undefined) return ['body: the spec defines none for this operation'];
  return spec.validate(op.bodySchema, body);
}

/** Validates and dispatches one request; returns the answer and what to record. */
async function handle(
  req: IncomingMessage,
  spec: SpecValidator,
  model: FcModel,
): Promise<{ a: Answer; op: string | null; body: unknown; specErrors?: string[] }> {
  const method = req.method ?? 'GET';
  const path = (req.url ?? '/').split('?')[0] as string;
  const text = await readBody(req);
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch (err) {
    const msg = `An error occurred when deserializing the json body of a request: ${(err as Error).message}`;
    return {
      a: { status: 400, body: { fault_message: msg } },
      op: null,
      body: text,
      specErrors: [msg],
    };
  }
  const op = spec.match(method, path);
  if (op === undefined) {
    const msg = `Invalid request method and/or path: ${method} ${path}.`;
    return { a: { status: 400, body: { fault_message: msg } }, op: null, body, specErrors: [msg] };
  }
  const errors = bodyErrors(spec, op, body);
  if (errors.length > 0) {
    const msg = `An error occurred when deserializing the json body of a request: ${errors.join('; ')}`;
    return {
      a: { status: 400, body: { fault_message: msg } },
      op: op.operationId,
      body,
      specErrors: errors,
    };
  }
  const a = model.handle(op.operationId, op.pathParams, body);
  const schema = a.body === undefined ? undefined : spec.responseSchema(op, a.status);
  const drift = schema === undefined ? [] : spec.validate(schema, a.body, 'response');
  if (drift.length > 0) {
    return {
      a: { status: 500, body: { fault_message: `stand-in bug: ${drift.join('; ')}` } },
      op: op.operationId,
      body,
    };
  }
  return { a, op: op.operationId, body };
}

/** Serves the API on `socketPath`; `record` receives every request. */
export function serveApi(
  socketPath: string,
  spec: SpecValidator,
  model: FcModel,
  record: (r: RequestRecord) => void,
): Server {
  const server = createServer((req, res) => {
    handle(req, spec, model).then(
      ({ a, op, body, specErrors }) => {
        const fault = (a.body as { fault_message?: string } | undefined)?.fault_message;
        record({
          pid: process.pid,
          operationId: op,
          method: req.method ?? '',
          path: req.url ?? '',
          body,
          status: a.status,
          ...(fault === undefined ? {} : { fault }),
          ...(specErrors === undefined ? {} : { specErrors }),
        });
        answer(res, a);
      },
      (err: unknown) =>
        answer(res, { status: 400, body: { fault_message: (err as Error).message } }),
    );
  });
  server.listen(socketPath);
  return server;
}
