/**
 * One HTTP/1.1 exchange written byte by byte over a plain socket, for fuzz
 * tests that send what a well-behaved client (fetch) refuses to: bad
 * methods, raw bytes in paths and headers, lying lengths. The answer is
 * read until the server closes (`connection: close`) or `timeoutMs` passes;
 * a timeout is reported, never swallowed — a hang is a finding.
 *
 * @module
 */
import { connect } from 'node:net';

/** A raw request. */
export interface RawRequest {
  readonly method: string;
  /** The request target, sent verbatim. */
  readonly path: string;
  /** Header lines, sent verbatim (a value may hold anything). */
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Buffer;
  /** Send this content-length instead of the body's own (or none when null). */
  readonly contentLength?: number | null;
}

/** A raw answer; `status` 0 when the server closed without one. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

function encodeRequest(r: RawRequest): Buffer {
  const body = r.body ?? Buffer.alloc(0);
  const lines = [`${r.method} ${r.path} HTTP/1.1`];
  for (const [k, v] of r.headers) lines.push(`${k}: ${v}`);
  const length = r.contentLength === undefined ? body.length : r.contentLength;
  if (length !== null) lines.push(`content-length: ${length}`);
  lines.push('connection: close', '', '');
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]);
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function parseResponse(raw: Buffer): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: raw };
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = raw.subarray(end + 4);
  const body = headers['transfer-encoding'] === 'chunked' ? dechunk(rest) : rest;
  return { status, headers, body };
}

/**
 * Sends one request to `host:port` and reads the whole answer.
 * @throws {Error} when no answer ends within `timeoutMs` (a hang).
 */
export function rawHttp(
  host: string,
  port: number,
  request: RawRequest,
  timeoutMs = 15_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${request.method} ${request.path}`));
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    // A server may reset a connection it refuses; what it sent before still counts.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks)));
    });
    // write, not end: Node's server aborts a request whose client half-closes.
    socket.on('connect', () => socket.write(encodeRequest(request)));
  });
}
