/**
 * One TCP port for HTTP/1.1 and cleartext HTTP/2 (h2c with prior knowledge):
 * the first bytes of each connection decide. The SDKs speak HTTP/1.1 over
 * `http://`; h2c serves proxies that multiplex.
 *
 * An HTTP/2 session reads its socket natively, which would miss bytes
 * already read for sniffing; those connections are therefore handed over
 * through a small duplex wrapper that replays the sniffed bytes first.
 *
 * @module
 */
import { createServer as createHttp1Server, type Server as Http1Server } from 'node:http';
import { createServer as createH2cServer, type Http2Server } from 'node:http2';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { RequestListener } from './request-handler.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
/** How long a new connection may stay silent before its first request. */
const SNIFF_TIMEOUT_MS = 60_000;

/** A socket whose first bytes were consumed, with those bytes put back. */
function replaying(socket: Socket, head: Buffer): Duplex {
  const duplex = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      socket.write(chunk, callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(err, callback) {
      socket.destroy(err ?? undefined);
      callback(err);
    },
  });
  duplex.push(head);
  socket.on('data', (chunk: Buffer) => {
    if (!duplex.push(chunk)) socket.pause();
  });
  socket.on('end', () => duplex.push(null));
  socket.on('error', (err) => duplex.destroy(err));
  socket.on('close', () => duplex.destroy());
  return duplex;
}

/** The servers behind one port. */
export interface DualServer {
  readonly tcp: Server;
  readonly http1: Http1Server;
  readonly http2: Http2Server;
  /** Destroys every open connection (shutdown). */
  destroyConnections(): void;
}

/** Creates the TCP server that dispatches to an HTTP/1.1 and an h2c server. */
export function createDualServer(listener: RequestListener): DualServer {
  const http1 = createHttp1Server(
    { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 60_000 },
    listener,
  );
  const http2 = createH2cServer({}, listener);
  const sockets = new Set<Socket>();
  // Small frames (a `start` event, then an `end`) must not wait for ACKs:
  // http.Server would disable Nagle itself, but it does not accept here.
  const tcp = createTcpServer({ noDelay: true, keepAlive: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, PREFACE.length);
      const maybeH2 = head.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (maybeH2 && head.length < PREFACE.length) return; // need more bytes
      socket.off('data', onData);
      socket.setTimeout(0);
      // No pause()/resume() here: the HTTP/1.1 server reads the socket's
      // handle natively and relies on the stream's own flow state for
      // backpressure; toggling it made uploads pile up in memory.
      if (maybeH2) {
        http2.emit('connection', replaying(socket, head));
      } else {
        socket.unshift(head);
        http1.emit('connection', socket);
      }
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
    socket.setTimeout(SNIFF_TIMEOUT_MS, () => socket.destroy());
  });
  return {
    tcp,
    http1,
    http2,
    destroyConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}
