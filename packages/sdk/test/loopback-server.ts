/**
 * A STAND-IN server on loopback for the SDK's wire tests: each test gives
 * a handler that plays the node or envd for one exchange and records what
 * the SDK sent. The real node and envd are exercised by the CLI package's
 * suites (`packages/cli/test/`).
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A received request, body included. */
export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

/** A running stand-in. */
export interface LoopbackServer {
  readonly url: string;
  readonly received: Received[];
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 that answers with `handler` after reading each body. */
export async function startLoopback(
  handler: (req: Received, res: ServerResponse) => void,
): Promise<LoopbackServer> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Connect envelope as bytes. */
export function frame(flags: number, message: unknown): Buffer {
  const data = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

/** A port on loopback where nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}
