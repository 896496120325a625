/**
 * envd's Connect adapter: `@connectrpc/connect-node`'s own adapter (the same
 * router, path table, compression and Node request/response bridges), with
 * one correction to its answers: a request the client got wrong — a body
 * that is not valid protobuf binary, an envelope flagged compressed without
 * a negotiated encoding — answers `invalid_argument` (400, or in a stream's
 * end frame), as a malformed JSON body already does. connect-es shares its
 * serialization between clients and servers and reports these as
 * `internal` (500), which would tell a caller that envd broke.
 *
 * @module
 */
import { Readable } from 'node:stream';
import {
  Code,
  ConnectError,
  createConnectRouter,
  type ConnectRouterOptions,
} from '@connectrpc/connect';
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from '@connectrpc/connect-node';
import type { ConnectRouter } from '@connectrpc/connect';
import type { Req, Res } from './http-io.js';

/** What the adapter takes. */
export interface ConnectAdapterOptions extends ConnectRouterOptions {
  readonly routes: (router: ConnectRouter) => void;
  /** Requests for paths that are no RPC. */
  readonly fallback: (req: Req, res: Res) => void;
}

/** Messages connect-es gives `internal` although the request was at fault. */
const CLIENT_FAULTS = [
  /^parse binary: /,
  /^received compressed envelope, but do not know how to decompress/,
];

interface WireError {
  code?: unknown;
  message?: unknown;
}

function isClientFault(e: WireError): boolean {
  const message = e.message;
  return (
    e.code === 'internal' &&
    typeof message === 'string' &&
    CLIENT_FAULTS.some((p) => p.test(message))
  );
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

function parseJson(bytes: Uint8Array): WireError {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as WireError;
  } catch {
    return {};
  }
}

/**
 * A stream's end frame (flag 2, one JSON message per chunk, as connect-es
 * writes them) with a client fault's `internal` turned into `invalid_argument`.
 */
async function* correctEndFrames(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    const frame = Buffer.from(chunk);
    const whole = frame.length >= 5 && frame.readUInt32BE(1) === frame.length - 5;
    const end = whole ? (parseJson(frame.subarray(5)) as { error?: WireError }) : {};
    if ((frame[0] ?? 0) & 2 && end.error !== undefined && isClientFault(end.error)) {
      const json = Buffer.from(
        JSON.stringify({ ...end, error: { ...end.error, code: 'invalid_argument' } }),
      );
      const head = Buffer.alloc(5);
      head.writeUInt8(frame[0] ?? 2, 0);
      head.writeUInt32BE(json.length, 1);
      yield new Uint8Array(Buffer.concat([head, json]));
    } else {
      yield chunk;
    }
  }
}

function replay(chunks: readonly Uint8Array[]): AsyncIterable<Uint8Array> {
  return Readable.from(chunks) as AsyncIterable<Uint8Array>;
}

/** The answer with a client fault reported as `invalid_argument` (400) instead of `internal`. */
export async function correctClientFaults(
  res: UniversalServerResponse,
): Promise<UniversalServerResponse> {
  const type = res.header?.get('content-type') ?? '';
  if (res.body === undefined) return res;
  const body = res.body;
  if (res.status === 200 && type.startsWith('application/connect+')) {
    return { ...res, body: correctEndFrames(body) };
  }
  if (res.status !== 500 || !type.startsWith('application/json')) return res;
  const raw = await collect(body);
  const error = parseJson(raw);
  const fault = isClientFault(error);
  const fixed = fault ? Buffer.from(JSON.stringify({ ...error, code: 'invalid_argument' })) : raw;
  const header = new Headers(res.header);
  header.delete('content-length');
  return {
    ...res,
    status: fault ? 400 : res.status,
    header,
    body: replay([new Uint8Array(fixed)]),
  };
}

/** A Node request listener serving the routes' RPCs and `fallback` for the rest. */
export function connectAdapter(options: ConnectAdapterOptions): (req: Req, res: Res) => void {
  const router = createConnectRouter({
    acceptCompression: [compressionGzip, compressionBrotli],
    ...options,
  });
  options.routes(router);
  const paths = new Map(router.handlers.map((h) => [h.requestPath, h]));
  return (req, res) => {
    const handler = paths.get((req.url ?? '').split('?', 1)[0] ?? '');
    if (handler === undefined) return options.fallback(req, res);
    const uReq = universalRequestFromNodeRequest(req, res, undefined, undefined);
    handler(uReq)
      .then(correctClientFaults)
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        // The client went away or the answer could not be written: nothing to tell anyone.
        if (ConnectError.from(reason).code !== Code.Aborted) res.destroy();
      });
  };
}
