/**
 * Request bodies as the node, the gateway and the dashboard read them: the
 * whole body up to a bound, and a JSON object body where empty means `{}`
 * (the e2b SDKs send no body on some calls). Every failure is
 * `API_BODY_INVALID`, so all three answer bad bodies the same way.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { AenvError } from './aenv-error.js';

/**
 * Reads a whole request body.
 * @throws {AenvError} `API_BODY_INVALID` past `maxBytes`.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      throw new AenvError('API_BODY_INVALID', `request body exceeds ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Parses a JSON object body (empty = `{}`).
 * @throws {AenvError} `API_BODY_INVALID` when not JSON or not an object.
 */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  const text = body.toString('utf8').trim();
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
