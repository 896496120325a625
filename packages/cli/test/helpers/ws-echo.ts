/**
 * A small loopback server standing in for an application inside a
 * sandbox, for data-plane tests through proxies: `GET /stream` answers in
 * two chunks 300 ms apart (a proxy that buffers shows as one late chunk),
 * and a WebSocket upgrade is accepted with the RFC 6455 handshake and every
 * short text frame is echoed back. {@link wsEcho} is the matching client:
 * handshake, one masked text frame, the echoed frame decoded.
 *
 * Frames here are short (< 126 bytes) and unfragmented; that is all the
 * tests send.
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function accept(key: string): string {
  return createHash('sha1')
    .update(key + GUID)
    .digest('base64');
}

/** A text frame of `payload`, masked when `mask` (client to server). */
function frame(payload: Buffer, mask: boolean): Buffer {
  if (payload.length >= 126) throw new Error('short frames only');
  if (!mask) return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
  const key = randomBytes(4);
  const body = Buffer.from(payload.map((b, i) => b ^ (key[i % 4] as number)));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), key, body]);
}

/** The payload of one complete frame at the start of `buf`, or undefined. */
function unframe(buf: Buffer): Buffer | undefined {
  if (buf.length < 2) return undefined;
  const masked = ((buf[1] as number) & 0x80) !== 0;
  const len = (buf[1] as number) & 0x7f;
  const start = masked ? 6 : 2;
  if (buf.length < start + len) return undefined;
  const body = buf.subarray(start, start + len);
  if (!masked) return Buffer.from(body);
  const key = buf.subarray(2, 6);
  return Buffer.from(body.map((b, i) => b ^ (key[i % 4] as number)));
}

/** A running echo server. */
export interface WsEchoServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 (an ephemeral port). */
export async function startWsEcho(): Promise<WsEchoServer> {
  const sockets = new Set<Duplex>();
  const server = createServer((req, res) => {
    if (req.url !== '/stream') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first,');
    void sleep(300).then(() => res.end('second'));
  });
  server.on('upgrade', (req, socket: Duplex) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const key = String(req.headers['sec-websocket-key']);
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${accept(key)}\r\n\r\n`,
    );
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const payload = unframe(pending);
      if (payload === undefined) return;
      pending = Buffer.alloc(0);
      socket.write(frame(payload, false));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Where to connect and what to send for routing (a proxy's address, Host or E2B headers). */
export interface Route {
  readonly url: string;
  readonly headers: OutgoingHttpHeaders;
}

/**
 * Opens a WebSocket through `route` (checking the handshake's accept
 * value), sends `text`, and resolves with the text echoed back.
 */
export async function wsEcho(route: Route, text: string): Promise<string> {
  const key = randomBytes(16).toString('base64');
  const req = request(route.url, {
    headers: {
      ...route.headers,
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': key,
    },
  });
  return new Promise<string>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => reject(new Error(`no upgrade: HTTP ${res.statusCode}`)));
    req.on('upgrade', (res, socket: Duplex, head: Buffer) => {
      if (res.headers['sec-websocket-accept'] !== accept(key)) {
        socket.destroy();
        reject(new Error('bad Sec-WebSocket-Accept'));
        return;
      }
      let got = head;
      const check = (): void => {
        const payload = unframe(got);
        if (payload === undefined) return;
        socket.destroy();
        resolve(payload.toString());
      };
      socket.on('data', (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        check();
      });
      socket.on('error', reject);
      socket.write(frame(Buffer.from(text), true));
      check();
    });
    req.end();
  });
}

/**
 * `GET /stream` through `route`: the body, and whether its first chunk
 * arrived well before the end (the proxy streamed rather than buffered).
 */
export async function streamThrough(route: Route): Promise<{ body: string; streamed: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${route.url}/stream`, { headers: route.headers }, (res) => {
      const chunks: string[] = [];
      let firstAt = 0;
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (chunks.length === 0) firstAt = Date.now();
        chunks.push(c);
      });
      res.on('end', () => {
        const body = chunks.join('');
        resolve({ body, streamed: res.statusCode === 200 && Date.now() - firstAt >= 200 });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
