/**
 * Reading requests and writing responses on `node:http`, with the limits
 * and error shapes of the node API: bodies are capped and parsed as JSON
 * objects, every error answer is `{code, message, error_code}` JSON.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJsonObject, readBody, toHttpError } from '@aenv/shared';

/** Largest JSON body the control plane accepts. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/**
 * Reads a JSON object body. An empty body is `{}` (the e2b SDKs send none on
 * some calls).
 * @throws {AenvError} `API_BODY_INVALID` when too large, not JSON or not an object.
 */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBody(req, MAX_JSON_BODY_BYTES));
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
  const { status, body, headers } = toHttpError(err);
  const finalStatus = statusOverride ?? status;
  if (res.headersSent) {
    res.destroy();
    return finalStatus;
  }
  sendJson(res, finalStatus, { ...body, code: finalStatus }, headers);
  return finalStatus;
}
