/**
 * Hand-made Connect protocol requests (JSON codec), to check envd's bytes on
 * the wire rather than through a client library.
 *
 * @module
 */

/** One decoded envelope of a streaming response. */
export interface Frame {
  readonly flags: number;
  readonly json: Record<string, unknown>;
}

/** Encodes one JSON message as a Connect envelope. */
export function envelope(message: unknown, flags = 0): Buffer {
  const body = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Splits a streaming response body into frames. */
export function decodeFrames(body: Buffer): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (at < body.length) {
    const flags = body.readUInt8(at);
    const length = body.readUInt32BE(at + 1);
    frames.push({
      flags,
      json: JSON.parse(body.subarray(at + 5, at + 5 + length).toString('utf8')) as Record<
        string,
        unknown
      >,
    });
    at += 5 + length;
  }
  return frames;
}

/** Calls a server-streaming method and returns the status, content type and frames. */
export async function callStream(
  url: string,
  method: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string | null; frames: Frame[] }> {
  const res = await fetch(`${url}/${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/connect+json',
      'connect-protocol-version': '1',
      ...headers,
    },
    body: envelope(message),
  });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    frames: decodeFrames(body),
  };
}

/** Calls a unary method with a JSON body (a string is sent as is). */
export async function callUnary(
  url: string,
  method: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string | null; json: Record<string, unknown> }> {
  const res = await fetch(`${url}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...headers },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    json: (await res.json()) as Record<string, unknown>,
  };
}
