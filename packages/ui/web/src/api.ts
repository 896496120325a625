/**
 * The page's calls: the dashboard's session endpoints and the API through
 * `/ui/api/…` (the server adds the key; the page never holds it). A 401
 * anywhere means the session is gone: listeners (the app) show the login
 * page.
 *
 * @module
 */

/** What `/ui/session` and a login answer. */
export interface Session {
  readonly kind: 'node' | 'gateway';
  readonly expiresAt: number | null;
}

/** A failed call, with the API's stable code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const unauthorized = new Set<() => void>();

/** Calls `fn` whenever a call finds the session gone. */
export function onUnauthorized(fn: () => void): () => void {
  unauthorized.add(fn);
  return () => unauthorized.delete(fn);
}

/** Reports a lost session to the listeners. */
export function sessionLost(): void {
  for (const fn of unauthorized) fn();
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { message?: string; error_code?: string };
    return new ApiError(res.status, body.error_code, body.message ?? `HTTP ${res.status}`);
  } catch {
    return new ApiError(res.status, undefined, text === '' ? `HTTP ${res.status}` : text);
  }
}

async function send(method: string, url: string, body?: unknown): Promise<Response> {
  const res = await fetch(url, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status === 401 && !url.endsWith('/ui/login')) sessionLost();
  if (!res.ok) throw await errorOf(res);
  return res;
}

/** Calls the API (`path` as on the node, e.g. `/sandboxes/abc/pause`); JSON answer or undefined. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await send(method, `/ui/api${path}`, body);
  const text = await res.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** Calls the API for a text answer (console logs). */
export async function apiText(path: string): Promise<string> {
  return (await send('GET', `/ui/api${path}`)).text();
}

/** The live session, or undefined when logged out. */
export async function currentSession(): Promise<Session | undefined> {
  const res = await fetch('/ui/session', { credentials: 'same-origin' });
  if (res.status === 401) return undefined;
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as Session;
}

/** Logs in with an API key. */
export async function login(key: string): Promise<Session> {
  const res = await send('POST', '/ui/login', { key });
  return (await res.json()) as Session;
}

/** Logs out. */
export async function logout(): Promise<void> {
  await send('POST', '/ui/logout');
}
