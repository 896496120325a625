/**
 * A STAND-IN launcher for API tests: instead of booting a microVM it
 * starts a small HTTP server on loopback that plays the guest (envd's
 * `/health` and `/init`, plus `/stream` and an upgrade echo for proxy
 * tests). It exists so route, auth and proxy behaviour can be tested in
 * seconds; the real microVM launcher is exercised by the VM suites.
 *
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EgressPolicy } from '@aenv/network';
import type { LaunchedSandbox, LaunchSpec, SandboxLauncher } from '../src/index.js';

/** What the stand-in guest recorded. */
export interface StandInGuest {
  readonly spec: LaunchSpec;
  readonly inits: unknown[];
  /** Egress policies applied after launch, in order. */
  readonly egressUpdates: EgressPolicy[];
  stopped: boolean;
  server: Server;
  /** Simulates the machine dying on its own. */
  crash: () => void;
}

/** Stand-in launcher; `guests` lists every guest started. */
export class StandInLauncher implements SandboxLauncher {
  readonly guests: StandInGuest[] = [];
  /** Delay before the stand-in guest listens (simulates boot). */
  bootDelayMs = 0;

  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<LaunchedSandbox> {
    const startedAt = performance.now();
    if (this.bootDelayMs > 0) {
      await new Promise((r) => setTimeout(r, this.bootDelayMs));
      signal.throwIfAborted();
    }
    let exit: (r: { reason: string }) => void = () => undefined;
    const exited = new Promise<{ reason: string }>((r) => (exit = r));
    const guest: StandInGuest = {
      spec,
      inits: [],
      egressUpdates: [],
      stopped: false,
      server: createGuestServer(),
      crash: () => exit({ reason: 'crashed' }),
    };
    guest.server.on('request', (req, res) => {
      if (req.url === '/init') {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          guest.inits.push(JSON.parse(body));
          res.writeHead(204).end();
        });
      }
    });
    await new Promise<void>((r) => guest.server.listen(0, '127.0.0.1', r));
    this.guests.push(guest);
    const port = (guest.server.address() as AddressInfo).port;
    return {
      marks: {
        startedAt,
        vmmRunningAt: performance.now(),
        initStartedAt: Promise.resolve(undefined),
      },
      address: () => ({ host: '127.0.0.1', port }),
      applyEgress: (policy) => {
        guest.egressUpdates.push(policy);
        return Promise.resolve();
      },
      exited,
      stop: async () => {
        if (guest.stopped) return;
        guest.stopped = true;
        guest.server.closeAllConnections();
        await new Promise((r) => guest.server.close(r));
      },
    };
  }

  close(): Promise<void> {
    for (const g of this.guests) if (!g.stopped) g.server.close();
    return Promise.resolve();
  }
}

function createGuestServer(): Server {
  const server = createServer((req, res) => {
    if (req.url === '/health') return void res.writeHead(204).end();
    if (req.url === '/stream') {
      // Sends a first chunk at once and the second later: a buffering proxy fails the test.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first\n');
      setTimeout(() => res.end('second\n'), 300);
      return;
    }
    if (req.url?.startsWith('/echo')) {
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-seen-api-key': String(req.headers['x-api-key'] ?? ''),
      });
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => res.end(JSON.stringify({ method: req.method, url: req.url, body })));
      return;
    }
    if (req.url !== '/init') res.writeHead(404).end();
  });
  server.on('upgrade', (_req, socket) => {
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nupgrade: echo\r\nconnection: upgrade\r\n\r\n',
    );
    socket.pipe(socket);
  });
  return server;
}
