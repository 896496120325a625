/**
 * Answers of the dashboard's own endpoints, in the node API's shapes: JSON
 * bodies, and every error as `{code, message, error_code}` through
 * `toHttpError` (the one place errors become statuses). Request bodies are
 * small JSON objects, read with a cap.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJsonObject, readBody, toHttpError } from '@aenv/shared';

/** Largest body the dashboard's own endpoints read (a login). */
export const MAX_UI_BODY_BYTES = 64 * 1024;

/** Headers every dashboard answer carries. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** Writes a JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string | string[]>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Writes an error answer; returns its status. */
export function sendError(res: ServerResponse, err: unknown): number {
  const { status, body, headers } = toHttpError(err);
  if (res.headersSent) {
    res.destroy();
    return status;
  }
  sendJson(res, status, body, headers);
  return status;
}

/**
 * Reads a JSON object body (empty = `{}`).
 * @throws {AenvError} `API_BODY_INVALID` when too large, not JSON or not an object.
 */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBody(req, MAX_UI_BODY_BYTES));
}
