/**
 * Reading requests and writing answers on the gateway: bounded bodies,
 * JSON answers, and every error as `{code, message, error_code}` (the
 * node API's shape, which the e2b SDKs parse).
 *
 * @module
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { readBody as readBoundedBody, toHttpError } from '@aenv/shared';

/** Largest control-plane body the gateway reads (the nodes' limit). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Hop-by-hop headers, never forwarded. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Reads a whole request body.
 * @throws {AenvError} `API_BODY_INVALID` past {@link MAX_BODY_BYTES}.
 */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return readBoundedBody(req, MAX_BODY_BYTES);
}

export { parseJsonObject } from '@aenv/shared';

/** Parses a JSON answer body, or undefined when it is not JSON. */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
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

/** Writes the JSON error answer of anything thrown; returns the status. */
export function sendError(res: ServerResponse, err: unknown): number {
  const { status, body, headers } = toHttpError(err);
  if (res.headersSent) {
    res.destroy();
    return status;
  }
  sendJson(res, status, { ...body, code: status }, headers);
  return status;
}

/** Headers to send on: hop-by-hop ones and `drop` removed. */
export function forwardable(
  headers: IncomingHttpHeaders,
  drop: readonly string[] = [],
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k) && !drop.includes(k)) out[k] = v;
  }
  return out;
}
