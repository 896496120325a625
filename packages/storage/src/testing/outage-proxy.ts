/**
 * Test support for blob-store outages, on loopback only.
 *
 * {@link startOutageProxy}: a TCP forwarder that can be taken down and
 * brought back on the same port — the STAND-IN for a network outage between
 * a node and its blob store (the real store behind it keeps running and
 * keeps its objects). `down()` stops listening and drops every open
 * connection, so new requests get "connection refused"; `up()` listens
 * again. {@link startSilentServer}: a server that accepts and never answers
 * (a black-holed store).
 *
 * @module
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** A forwarder that can be taken down. */
export interface OutageProxy {
  /** `http://127.0.0.1:<port>`: point the client here. */
  readonly endpoint: string;
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a forwarder on 127.0.0.1 to `target` (an `http://host:port` URL). */
export async function startOutageProxy(target: string): Promise<OutageProxy> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const serve = (): Server =>
    createServer((client) => {
      const upstream = createConnection({ host: hostname, port: Number(targetPort) });
      track(client);
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const addr = server.address();
        resolve(typeof addr === 'object' && addr !== null ? addr.port : port);
      });
    });
  let server: Server | undefined = serve();
  const port = await listen(server, 0);
  const down = async () => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    down,
    up: async () => {
      if (server !== undefined) return;
      server = serve();
      await listen(server, port);
    },
    stop: down,
  };
}

/** A loopback TCP server that accepts connections and never answers (a black-holed store). */
export async function startSilentServer(): Promise<{
  endpoint: string;
  connections(): number;
  stop(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createServer((s) => {
    count += 1;
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    connections: () => count,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
