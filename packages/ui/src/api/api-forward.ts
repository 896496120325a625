/**
 * `/ui/api/<path>`: the dashboard's calls to the node API (or the
 * gateway's, which is the same API), made here with the session's key in
 * `X-API-Key` so the key never reaches the page. Method, path, query, body
 * and the headers the API reads are passed on; the answer comes back with
 * its status and body, except that JSON answers lose every
 * `envdAccessToken` field (the page never needs a sandbox's envd token:
 * terminals are opened here, see `terminal/`).
 *
 * Cookies and routing headers (`E2b-Sandbox-*`, `Host`) are not passed on,
 * so a dashboard call never reaches the data plane.
 *
 * @module
 */
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { AenvError } from '@aenv/shared';
import { SECURITY_HEADERS } from '../http/http-io.js';

/** Request headers passed on to the API. */
const PASSED_ON = ['content-type', 'accept', 'idempotency-key'] as const;
/** Answer headers passed back to the page. */
const PASSED_BACK = ['content-type', 'x-next-token', 'retry-after'] as const;
/** JSON answers up to this size are scrubbed; larger ones are refused (the API has no such). */
const MAX_JSON_ANSWER = 32 * 1024 * 1024;

/** Removes `envdAccessToken` wherever it occurs in a JSON value. */
export function scrubTokens(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrubTokens);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k !== 'envdAccessToken') out[k] = scrubTokens(v);
  }
  return out;
}

/**
 * Forwards one request to `apiUrl` + `path` (path and query, starting with
 * `/`) with `key`, and writes the answer.
 * @throws {AenvError} `INTERNAL` when the API cannot be reached at all.
 */
export function forwardToApi(
  req: IncomingMessage,
  res: ServerResponse,
  target: { readonly apiUrl: string; readonly path: string; readonly key: string },
): Promise<void> {
  const url = new URL(target.path, target.apiUrl);
  const headers: Record<string, string> = { 'x-api-key': target.key };
  for (const h of PASSED_ON) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  return new Promise<void>((resolve, reject) => {
    const out = request(url, { method: req.method ?? 'GET', headers }, (answer) => {
      relayAnswer(answer, res).then(resolve, reject);
    });
    out.on('error', (err) => {
      reject(new AenvError('INTERNAL', 'the dashboard could not reach the API', { cause: err }));
    });
    req.on('aborted', () => out.destroy());
    req.pipe(out);
  });
}

async function relayAnswer(answer: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = { ...SECURITY_HEADERS };
  for (const h of PASSED_BACK) {
    const v = answer.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  const status = answer.statusCode ?? 502;
  const isJson = (answer.headers['content-type'] ?? '').startsWith('application/json');
  if (!isJson) {
    res.writeHead(status, headers);
    answer.pipe(res);
    await new Promise<void>((resolve) => {
      res.once('close', resolve);
      answer.once('error', () => resolve());
    });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_ANSWER) throw new AenvError('INTERNAL', 'the API answer is too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let body = text;
  if (text.trim() !== '') {
    try {
      body = JSON.stringify(scrubTokens(JSON.parse(text)));
    } catch {
      body = text;
    }
  }
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
