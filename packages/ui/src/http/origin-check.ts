/**
 * The same-origin rule of the dashboard's state-changing requests and
 * terminal upgrades. The session cookie is `SameSite=Strict`, so another
 * site cannot make the browser send it; this check is the second fence
 * (old browsers, same-site subdomains): a request whose `Origin` names
 * another host than the one it was sent to, or that the browser marks
 * `Sec-Fetch-Site: cross-site`, is refused. Requests without `Origin`
 * (curl, scripts) pass: they cannot ride a browser's cookie.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { AenvError } from '@aenv/shared';

function first(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s?.split(',')[0]?.trim();
}

/** Whether the request comes from a page of the host it was sent to. */
export function isSameOrigin(req: IncomingMessage): boolean {
  if (first(req.headers['sec-fetch-site']) === 'cross-site') return false;
  const origin = first(req.headers.origin);
  if (origin === undefined) return true;
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    return false;
  }
  const hosts = [first(req.headers['x-forwarded-host']), first(req.headers.host)];
  return hosts.some((h) => h !== undefined && h.toLowerCase() === originHost);
}

/**
 * Refuses a cross-origin request.
 * @throws {AenvError} `UI_ORIGIN_REJECTED`.
 */
export function assertSameOrigin(req: IncomingMessage): void {
  if (!isSameOrigin(req)) {
    throw new AenvError(
      'UI_ORIGIN_REJECTED',
      'the dashboard accepts this request only from its own pages',
    );
  }
}
