/**
 * The data plane through the gateway: a request naming a sandbox (headers
 * or host) is passed, unchanged and streamed both ways, to the node the
 * sandbox lives on, whose own proxy takes it to the guest port; upgrades
 * (WebSocket) are piped raw. A paused sandbox on a lost node is moved
 * first (the node it lands on resumes it on traffic when it auto-resumes).
 * The data plane needs no API key, as on a node: envd checks its own
 * access token. A request that does carry an `X-API-Key` is held to it:
 * an invalid key answers 401, and a sandbox of another tenant is answered
 * exactly like an unknown one. Unknown sandboxes answer 502 JSON, as a
 * node does.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { toHttpError, type ProxyTarget } from '@aenv/shared';
import type { TenantAuth } from '../tenants/tenant-auth.js';
import type { Gateway } from './gateway-context.js';
import { homeFor, locate } from './sandbox-home.js';

/** Why a data-plane request is not passed on. */
type Refusal = { readonly status: number; readonly body: string };

function badGateway(sandboxId: string, message: string): string {
  return JSON.stringify({ code: 502, message, sandboxId, error_code: 'SBX_NOT_FOUND' });
}

/** The node URL for a data-plane request, or the answer refusing it. */
async function nodeUrlFor(
  g: Gateway,
  auth: TenantAuth,
  req: IncomingMessage,
  target: ProxyTarget,
): Promise<string | Refusal> {
  const notFound = { status: 502, body: badGateway(target.sandboxId, 'The sandbox was not found') };
  let tenant: string | undefined;
  try {
    const key = req.headers['x-api-key'];
    if (key !== undefined) tenant = (await auth.authenticate(key)).tenant;
  } catch (err) {
    const { status, body } = toHttpError(err);
    return status === 401 ? { status, body: JSON.stringify(body) } : notFound;
  }
  try {
    const home = await locate(g, target.sandboxId, tenant);
    return (await homeFor(g, home, true)).report.url;
  } catch {
    return notFound;
  }
}

/** The parts of a data-plane request. */
interface DataRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/** Forwards one data-plane request; returns once it is under way. */
export async function proxyRequest(
  g: Gateway,
  auth: TenantAuth,
  d: DataRequest,
  target: ProxyTarget,
): Promise<void> {
  const { req, res } = d;
  const answer = (status: number, body: string): void => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const url = await nodeUrlFor(g, auth, req, target);
  if (typeof url !== 'string') return answer(url.status, url.body);
  g.nodes.proxy(url, req, res, () => {
    g.metrics.nodeUnreachable();
    answer(502, badGateway(target.sandboxId, 'The sandbox is not reachable'));
  });
}

/** The parts of an upgrade. */
interface DataUpgrade {
  readonly req: IncomingMessage;
  readonly socket: Duplex;
  readonly head: Buffer;
}

/** Forwards an upgrade. */
export async function proxyUpgrade(
  g: Gateway,
  auth: TenantAuth,
  u: DataUpgrade,
  target: ProxyTarget,
): Promise<void> {
  const url = await nodeUrlFor(g, auth, u.req, target);
  if (typeof url !== 'string') {
    const reason = url.status === 401 ? 'Unauthorized' : 'Bad Gateway';
    u.socket.end(
      `HTTP/1.1 ${url.status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(url.body)}\r\nconnection: close\r\n\r\n${url.body}`,
    );
    return;
  }
  g.nodes.upgrade(url, u.req, u.socket, u.head);
}
