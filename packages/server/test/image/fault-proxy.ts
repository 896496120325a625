/**
 * A counting, fault-injecting HTTP proxy on loopback, put between the
 * image client and the real registry: it records every blob request (so a
 * test can count what a pull downloaded) and can break blob answers the way
 * networks and registries do — reset the connection after some bytes,
 * flip a byte of the body, answer 503.
 *
 * @module
 */
import {
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** Faults to inject into blob answers (by digest). */
export interface Faults {
  /** Reset the connection after this many body bytes of the blob, `times` times. */
  reset?: { digest: string; afterBytes: number; times: number };
  /** Flip one byte of the blob's body, every time. */
  corrupt?: string;
  /** Answer 503 to the blob, `times` times. */
  unavailable?: { digest: string; times: number };
}

/** A running proxy. */
export interface FaultProxy {
  /** `127.0.0.1:<port>`. */
  readonly host: string;
  /** Blob digests requested, in order (with `@range` when a Range header was sent). */
  readonly blobRequests: string[];
  faults: Faults;
  close(): Promise<void>;
}

function blobDigest(url: string | undefined): string | undefined {
  return /\/blobs\/(sha256:[a-f0-9]{64})/.exec(url ?? '')?.[1];
}

/** Starts a proxy in front of `target` (`host:port`). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const [host, port] = target.split(':');
  const state: FaultProxy = {
    host: '',
    blobRequests: [],
    faults: {},
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((req, res) => {
    const digest = blobDigest(req.url);
    if (digest !== undefined && req.method === 'GET') {
      state.blobRequests.push(req.headers.range === undefined ? digest : `${digest}@range`);
      const u = state.faults.unavailable;
      if (u?.digest === digest && u.times > 0) {
        u.times--;
        res.writeHead(503).end();
        return;
      }
    }
    const up = request(
      { host, port: Number(port), path: req.url, method: req.method, headers: req.headers },
      (ur) => relay(ur, res, digest, state.faults),
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as AddressInfo;
  return Object.assign(state, {
    host: `127.0.0.1:${addr.port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}

function relay(
  ur: IncomingMessage,
  res: ServerResponse,
  digest: string | undefined,
  f: Faults,
): void {
  res.writeHead(ur.statusCode ?? 502, ur.headers);
  const reset = f.reset?.digest === digest && (f.reset?.times ?? 0) > 0 ? f.reset : undefined;
  if (reset !== undefined) reset.times--;
  const corrupt = digest !== undefined && f.corrupt === digest;
  let sent = 0;
  let flipped = false;
  ur.on('data', (chunk: Buffer) => {
    if (reset !== undefined && sent >= reset.afterBytes) return;
    let out = chunk;
    if (corrupt && !flipped && chunk.length > 0) {
      out = Buffer.from(chunk);
      out[0] = (out[0] ?? 0) ^ 0xff;
      flipped = true;
    }
    if (reset !== undefined && sent + out.length >= reset.afterBytes) {
      res.write(out.subarray(0, Math.max(0, reset.afterBytes - sent)));
      sent = reset.afterBytes;
      ur.destroy();
      // Let the bytes reach the client first: the break comes mid-body.
      setTimeout(() => res.socket?.destroy(), 100);
      return;
    }
    sent += out.length;
    res.write(out);
  });
  ur.on('end', () => {
    if (reset === undefined || sent < reset.afterBytes) res.end();
  });
}
