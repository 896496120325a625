/**
 * The dashboard's own calls to the API it fronts (live events, terminals),
 * made with a session's key. JSON in, JSON out; a non-2xx answer becomes
 * an {@link ApiCallError} carrying the API's status and stable code, so a
 * revoked key (401) can end the session's streams.
 *
 * @module
 */

/** A non-2xx answer of the API. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

/** One JSON answer and the headers callers read. */
export interface ApiAnswer<T> {
  readonly body: T;
  readonly nextToken: string | undefined;
}

/** Calls the API at `apiUrl` with `key`. */
export class ApiClient {
  constructor(
    readonly apiUrl: () => string,
    readonly key: string,
  ) {}

  /**
   * `method path` with an optional JSON body.
   * @throws {ApiCallError} for a non-2xx answer; network errors as they come.
   */
  async call<T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
    const res = await fetch(new URL(path, this.apiUrl()), {
      method,
      headers: {
        'x-api-key': this.key,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    if (!res.ok) {
      const err = parsed as { message?: unknown; error_code?: unknown } | undefined;
      throw new ApiCallError(
        res.status,
        typeof err?.error_code === 'string' ? err.error_code : undefined,
        typeof err?.message === 'string' ? err.message : `${method} ${path}: ${res.status}`,
      );
    }
    return { body: parsed as T, nextToken: res.headers.get('x-next-token') ?? undefined };
  }

  /** `GET path`, following `x-next-token` pages (at most `maxPages`). */
  async list<T>(path: string, maxPages = 20): Promise<T[]> {
    const out: T[] = [];
    let token: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const sep = path.includes('?') ? '&' : '?';
      const url =
        token === undefined ? path : `${path}${sep}nextToken=${encodeURIComponent(token)}`;
      const answer = await this.call<T[]>('GET', url);
      out.push(...(Array.isArray(answer.body) ? answer.body : []));
      token = answer.nextToken;
      if (token === undefined) break;
    }
    return out;
  }
}
