/**
 * The data plane through the gateway: a request naming a sandbox (headers
 * or host) is passed, unchanged and streamed both ways, to the node the
 * sandbox lives on, whose own proxy takes it to the guest port; upgrades
 * (WebSocket) are piped raw. A paused sandbox on a lost node is moved
 * first (the node it lands on resumes it on traffic when it auto-resumes).
 * The data plane needs no API key, as on a node: envd checks its own
 * access token. Unknown sandboxes answer 502 JSON, as a node does.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Gateway } from './gateway-context.js';
import type { ProxyTarget } from '@aenv/shared';
import { homeFor, locate } from './sandbox-home.js';

function badGateway(sandboxId: string, message: string): string {
  return JSON.stringify({ code: 502, message, sandboxId, error_code: 'SBX_NOT_FOUND' });
}

async function nodeUrlFor(g: Gateway, target: ProxyTarget): Promise<string | undefined> {
  try {
    const home = await locate(g, target.sandboxId);
    return (await homeFor(g, home, true)).report.url;
  } catch {
    return undefined;
  }
}

/** Forwards one data-plane request; returns its status once answered. */
export async function proxyRequest(
  g: Gateway,
  req: IncomingMessage,
  res: ServerResponse,
  target: ProxyTarget,
): Promise<void> {
  const fail = (message: string): void => {
    const body = badGateway(target.sandboxId, message);
    res.writeHead(502, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const url = await nodeUrlFor(g, target);
  if (url === undefined) return fail('The sandbox was not found');
  g.nodes.proxy(url, req, res, () => {
    g.metrics.nodeUnreachable();
    fail('The sandbox is not reachable');
  });
}

/** Forwards an upgrade. */
export async function proxyUpgrade(
  g: Gateway,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: ProxyTarget,
): Promise<void> {
  const url = await nodeUrlFor(g, target);
  if (url === undefined) {
    const body = badGateway(target.sandboxId, 'The sandbox was not found');
    socket.end(
      `HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    return;
  }
  g.nodes.upgrade(url, req, socket, head);
}
