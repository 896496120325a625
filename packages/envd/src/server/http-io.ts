/**
 * Small request/response helpers shared by envd's plain HTTP routes (Node's
 * HTTP/1.1 and HTTP/2 compatibility objects alike).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { AenvError } from '@aenv/shared';
import { toEnvdHttpError } from '../errors.js';
import { errorFields, type EnvdLogger } from '../logger.js';

/** A server request of either protocol. */
export type Req = IncomingMessage | Http2ServerRequest;
/** A server response of either protocol. */
export type Res = ServerResponse | Http2ServerResponse;

/** The first value of a request header. */
export function headerOf(req: Req, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Writes a complete response with a JSON body. */
export function sendJson(
  res: Res,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const data = Buffer.from(JSON.stringify(body));
  (res as ServerResponse).writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(data.byteLength),
    ...headers,
  });
  res.end(data);
}

/** Writes a response without a body. */
export function sendEmpty(res: Res, status: number, headers: Record<string, string> = {}): void {
  (res as ServerResponse).writeHead(status, headers);
  res.end();
}

/**
 * Answers an error as `{code, message}` JSON; internal failures are logged.
 * When the headers are gone already, the response is cut instead.
 */
export function sendError(res: Res, err: unknown, logger: EnvdLogger): void {
  const { status, body } = toEnvdHttpError(err);
  if (status >= 500 && status !== 507) logger.log('error', 'request failed', errorFields(err));
  if (res.headersSent) {
    res.destroy(err instanceof Error ? err : undefined);
    return;
  }
  sendJson(res, status, body);
}

/**
 * Reads a request body as JSON (an empty body is `{}`).
 * @throws {AenvError} `INVALID_ARGUMENT` for bodies that are too large or not JSON.
 */
export async function readJson(req: Req, limit = 1 << 20): Promise<unknown> {
  // Reads to the end even past the limit (dropping the excess), so the
  // client gets the error answer instead of a reset connection.
  const raw = await new Promise<Buffer | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= limit) chunks.push(chunk);
    });
    req.once('end', () => resolve(size <= limit ? Buffer.concat(chunks) : undefined));
    req.once('error', reject);
  });
  if (raw === undefined)
    throw new AenvError('INVALID_ARGUMENT', `request body exceeds ${limit} bytes`);
  const text = raw.toString('utf8').trim();
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new AenvError('INVALID_ARGUMENT', `request body is not JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Runs an async route, turning its failures into error responses. */
export function route(res: Res, logger: EnvdLogger, fn: () => Promise<void>): void {
  fn().catch((err: unknown) => sendError(res, err, logger));
}
