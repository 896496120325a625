/**
 * Raw Connect clients for envd's services (for what the JS SDK does not
 * call: polling watchers, StreamInput, binary codec, HTTP/2).
 *
 * @module
 */
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Filesystem } from '../../src/gen/filesystem/filesystem_pb.js';
import { Process } from '../../src/gen/process/process_pb.js';

/** How to reach envd. */
export interface ClientOptions {
  readonly binary?: boolean;
  readonly http2?: boolean;
  readonly headers?: Record<string, string>;
}

function transport(url: string, opts: ClientOptions) {
  return createConnectTransport({
    baseUrl: url,
    httpVersion: opts.http2 === true ? '2' : '1.1',
    useBinaryFormat: opts.binary === true,
    interceptors: [
      (next) => (req) => {
        for (const [k, v] of Object.entries(opts.headers ?? {})) req.header.set(k, v);
        return next(req);
      },
    ],
  });
}

/** A `process.Process` client. */
export function processClient(url: string, opts: ClientOptions = {}): Client<typeof Process> {
  return createClient(Process, transport(url, opts));
}

/** A `filesystem.Filesystem` client. */
export function filesystemClient(url: string, opts: ClientOptions = {}): Client<typeof Filesystem> {
  return createClient(Filesystem, transport(url, opts));
}
