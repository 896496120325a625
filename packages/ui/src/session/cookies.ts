/**
 * The `Cookie` and `Set-Cookie` headers of the dashboard session (RFC 6265):
 * parsing the request's cookies, and writing the session cookie with the
 * attributes that keep it away from scripts (`HttpOnly`), from other sites
 * (`SameSite=Strict`) and from the rest of the API (`Path=/ui`); `Secure`
 * when the request came over TLS (directly or through a proxy that says
 * so in `X-Forwarded-Proto`).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { SESSION_COOKIE } from './session-store.js';

/** The cookies of a request by name (the first of duplicates wins). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of (header ?? '').split(';')) {
    const part = raw.trim();
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      value = value.slice(1, -1);
    }
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

/** The session id a request carries, or undefined. */
export function sessionIdOf(req: IncomingMessage): string | undefined {
  return parseCookies(req.headers.cookie).get(SESSION_COOKIE);
}

/** Whether the request reached us (or the proxy in front of us) over TLS. */
export function isSecure(req: IncomingMessage): boolean {
  if ((req.socket as Partial<TLSSocket>).encrypted === true) return true;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim();
  return first === 'https';
}

/** `Set-Cookie` for a new session that lasts `maxAgeMs`. */
export function sessionCookie(id: string, maxAgeMs: number, secure: boolean): string {
  const attrs = [
    `${SESSION_COOKIE}=${id}`,
    'Path=/ui',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${Math.floor(maxAgeMs / 1000)}`,
  ];
  if (secure) attrs.push('Secure');
  return attrs.join('; ');
}

/** `Set-Cookie` that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', 0, secure);
}
