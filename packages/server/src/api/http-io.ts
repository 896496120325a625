/**
 * Reading requests and writing responses on `node:http`, with the limits
 * and error shapes of the node API: bodies are capped and parsed as JSON
 * objects, every error answer is `{code, message, error_code}` JSON.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AenvError, toHttpError } from '@aenv/shared';

/** Largest JSON body the control plane accepts. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/**
 * Reads a JSON object body. An empty body is `{}` (the e2b SDKs send none on
 * some calls).
 * @throws {AenvError} `API_BODY_INVALID` when too large, not JSON or not an object.
 */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_BODY_BYTES) {
      throw new AenvError('API_BODY_INVALID', `request body exceeds ${MAX_JSON_BODY_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new AenvError('API_BODY_INVALID', 'request body is not valid JSON', { cause: err });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AenvError('API_BODY_INVALID', 'request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** Writes a JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * Writes an empty answer (204 and friends). Statuses that may carry a body
 * say `content-length: 0`: without it Node sends a chunked empty body,
 * which clients such as openapi-fetch (the e2b SDK) try to parse as JSON.
 */
export function sendEmpty(res: ServerResponse, status = 204): void {
  res.writeHead(status, status === 204 || status === 304 ? {} : { 'content-length': 0 });
  res.end();
}

/** Writes the JSON error answer of anything thrown; returns the status used. */
export function sendError(res: ServerResponse, err: unknown, statusOverride?: number): number {
  const { status, body } = toHttpError(err);
  const finalStatus = statusOverride ?? status;
  if (res.headersSent) {
    res.destroy();
    return finalStatus;
  }
  sendJson(res, finalStatus, { ...body, code: finalStatus });
  return finalStatus;
}
