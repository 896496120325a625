/**
 * Registry authentication (the Docker Registry token flow, used by Docker
 * Hub, GHCR, Quay and most registries, and plain Basic auth):
 *
 * 1. a request without credentials answers 401 with `WWW-Authenticate`;
 * 2. `Bearer realm="…",service="…",scope="…"`: GET `realm?service=…&scope=…`
 *    (with Basic credentials when the node has some, anonymously otherwise)
 *    answers `{token}` or `{access_token}` (+ `expires_in`), sent as
 *    `Authorization: Bearer` until it expires;
 * 3. `Basic realm="…"`: the credentials go as `Authorization: Basic`.
 *
 * Tokens are cached per registry and scope. The token endpoint is reached
 * with the same retry rules as the registry itself (`fetchWithRetry`).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { RegistryCredentials } from './registry-credentials.js';

/** One parsed `WWW-Authenticate` challenge. */
export interface AuthChallenge {
  /** `bearer` or `basic` (lowercase). */
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Parses a `WWW-Authenticate` header's first challenge (RFC 7235 auth-params,
 * quoted strings with backslash escapes).
 */
export function parseChallenge(header: string): AuthChallenge | undefined {
  const m = /^\s*([A-Za-z][A-Za-z0-9_-]*)\s*(.*)$/s.exec(header);
  if (m === null) return undefined;
  const params: Record<string, string> = {};
  const re = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/gy;
  const rest = m[2] ?? '';
  let at = 0;
  while (at < rest.length) {
    re.lastIndex = at;
    const p = re.exec(rest);
    if (p === null) break;
    params[(p[1] ?? '').toLowerCase()] =
      p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] ?? '');
    at = re.lastIndex;
    while (rest[at] === ' ' || rest[at] === ',') at++;
  }
  return { scheme: (m[1] ?? '').toLowerCase(), params };
}

/** The `Authorization` value of Basic credentials. */
export function basicAuthorization(c: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

interface CachedToken {
  readonly value: string;
  readonly expiresAt: number;
}

/** Fetches one URL (the client's retrying fetch). */
export type AuthFetch = (url: string, init: RequestInit) => Promise<Response>;

/** Bearer tokens per registry and scope, and the Authorization header a request needs. */
export class RegistryAuth {
  readonly #tokens = new Map<string, CachedToken>();
  /** Registries known to want Basic auth (answered a Basic challenge). */
  readonly #basic = new Set<string>();

  /** The cached Authorization value for a registry and scope, if any. */
  cached(
    registry: string,
    scope: string,
    credentials: RegistryCredentials | undefined,
  ): string | undefined {
    const token = this.#tokens.get(`${registry}|${scope}`);
    if (token !== undefined && token.expiresAt > Date.now()) return `Bearer ${token.value}`;
    if (this.#basic.has(registry) && credentials !== undefined)
      return basicAuthorization(credentials);
    return undefined;
  }

  /**
   * Answers a 401's challenge: fetches a token (Bearer) or arms Basic auth.
   * @returns the Authorization value to retry with.
   * @throws {AenvError} `IMAGE_REGISTRY_DENIED` (no usable credentials, token refused),
   *   `IMAGE_REGISTRY_UNAVAILABLE` (token endpoint unreachable or malformed).
   */
  async answer(challenge: AuthChallenge, ctx: TokenContext): Promise<string> {
    if (challenge.scheme === 'basic') {
      if (ctx.credentials === undefined)
        throw denied(ctx.registry, 'it wants credentials and the node has none');
      this.#basic.add(ctx.registry);
      return basicAuthorization(ctx.credentials);
    }
    if (challenge.scheme !== 'bearer' || challenge.params.realm === undefined) {
      throw new AenvError(
        'IMAGE_REGISTRY_UNAVAILABLE',
        `registry ${ctx.registry} sent an unusable challenge (${challenge.scheme})`,
      );
    }
    const token = await fetchToken(challenge.params.realm, challenge.params.service, ctx);
    // Refresh a little early so a long download does not cross the expiry mid-request.
    const expiresAt = Date.now() + Math.max(1, token.lifetime - 10) * 1000;
    this.#tokens.set(`${ctx.registry}|${ctx.scope}`, { value: token.value, expiresAt });
    return `Bearer ${token.value}`;
  }

  /** Forgets a registry's token for a scope (it was refused). */
  forget(registry: string, scope: string): void {
    this.#tokens.delete(`${registry}|${scope}`);
  }
}

type TokenContext = {
  readonly registry: string;
  readonly scope: string;
  readonly credentials: RegistryCredentials | undefined;
  readonly fetch: AuthFetch;
};

/** Asks a token service for a token of the scope. */
async function fetchToken(
  realm: string,
  service: string | undefined,
  ctx: TokenContext,
): Promise<{ value: string; lifetime: number }> {
  const url = new URL(realm);
  if (service !== undefined) url.searchParams.set('service', service);
  url.searchParams.set('scope', ctx.scope);
  const headers: Record<string, string> = {};
  if (ctx.credentials !== undefined) headers.authorization = basicAuthorization(ctx.credentials);
  const res = await ctx.fetch(url.toString(), { headers });
  const unavailable = (why: string, cause?: unknown): AenvError =>
    new AenvError('IMAGE_REGISTRY_UNAVAILABLE', `token service of ${ctx.registry} ${why}`, {
      cause,
    });
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    const who = ctx.credentials === undefined ? 'anonymous access' : 'the credentials';
    throw denied(ctx.registry, `its token service refused ${who}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw unavailable(`answered ${res.status}`);
  }
  let body: { token?: unknown; access_token?: unknown; expires_in?: unknown };
  try {
    body = (await res.json()) as typeof body;
  } catch (err) {
    throw unavailable('sent no JSON', err);
  }
  const value = typeof body.token === 'string' ? body.token : body.access_token;
  if (typeof value !== 'string' || value === '') throw unavailable('sent no token');
  const lifetime =
    typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60;
  return { value, lifetime };
}

/** `IMAGE_REGISTRY_DENIED` for a registry. */
export function denied(registry: string, why: string): AenvError {
  return new AenvError('IMAGE_REGISTRY_DENIED', `registry ${registry} denied access: ${why}`, {
    fields: { registry },
  });
}
