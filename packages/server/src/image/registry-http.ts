/**
 * HTTP for registry clients: `fetch` with retries and exponential backoff,
 * redirects followed by hand (an `Authorization` header never follows a
 * redirect to another origin, e.g. to a blob store), and a timeout that
 * covers waiting for the answer's headers.
 *
 * Transient failures are retried: network errors (resets, refused
 * connections, timeouts), 429 and 5xx. `Retry-After` (seconds) is honoured
 * up to the backoff cap. Anything else is the caller's to interpret.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';

/** Retry and timeout settings. */
export interface RetryPolicy {
  /** Extra attempts after the first. */
  readonly retries: number;
  /** Backoff before the first retry, doubled each time (with jitter). */
  readonly backoffMs: number;
  /** Longest backoff. */
  readonly maxBackoffMs: number;
  /** How long an attempt may wait for headers (and, for bodies, between chunks). */
  readonly timeoutMs: number;
}

/** Sensible defaults for registries on the internet. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 4,
  backoffMs: 250,
  maxBackoffMs: 8000,
  timeoutMs: 30_000,
};

/** Whether an HTTP status is worth a retry. */
export function transientStatus(status: number): boolean {
  return status === 429 || status === 408 || (status >= 500 && status <= 599);
}

/** The backoff before retry number `attempt` (1-based). */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfter?: string | null,
): number {
  const seconds = retryAfter === null || retryAfter === undefined ? NaN : Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0)
    return Math.min(seconds * 1000, policy.maxBackoffMs);
  const base = Math.min(policy.backoffMs * 2 ** (attempt - 1), policy.maxBackoffMs);
  return Math.round(base / 2 + (Math.random() * base) / 2);
}

/** A failure that a retry may cure. */
export class TransientError extends Error {
  override readonly name = 'TransientError';
}

/** Runs `attempt` until it succeeds, a non-transient error occurs or retries are spent. */
export async function withRetries<T>(
  policy: RetryPolicy,
  what: string,
  attempt: (n: number) => Promise<T>,
  onRetry?: (n: number, err: unknown) => void,
): Promise<T> {
  let last: unknown;
  for (let n = 0; n <= policy.retries; n++) {
    if (n > 0) {
      onRetry?.(n, last);
      const after = last instanceof RetryAfterError ? last.retryAfter : undefined;
      await sleep(backoffDelay(policy, n, after));
    }
    try {
      return await attempt(n);
    } catch (err) {
      if (!(err instanceof TransientError)) throw err;
      last = err;
    }
  }
  throw new AenvError(
    'IMAGE_REGISTRY_UNAVAILABLE',
    `${what} failed after ${policy.retries + 1} attempts: ${last instanceof Error ? last.message : String(last)}`,
    { cause: last },
  );
}

/** A transient HTTP status, with its `Retry-After`. */
export class RetryAfterError extends TransientError {
  constructor(
    message: string,
    readonly retryAfter: string | null,
  ) {
    super(message);
  }
}

/** One request: URL, headers and whether they may follow a redirect to another origin. */
export interface RegistryRequest {
  readonly url: string;
  readonly method?: 'GET' | 'HEAD';
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Sends one request (no retry): follows up to 5 redirects, dropping
 * `authorization` when the origin changes; times out waiting for headers.
 * Network failures and transient statuses become {@link TransientError}s.
 * The caller reads (or cancels) the returned body.
 */
export async function sendOnce(
  req: RegistryRequest,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Response> {
  let url = req.url;
  let headers: Record<string, string> = { ...req.headers };
  for (let hop = 0; hop <= 5; hop++) {
    const res = await fetchOnce(url, { method: req.method ?? 'GET', headers }, timeoutMs, signal);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location !== null) {
      await res.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== new URL(url).origin) headers = withoutAuthorization(headers);
      url = next.toString();
      continue;
    }
    if (transientStatus(res.status)) {
      await res.body?.cancel();
      const why = `${new URL(url).host} answered ${res.status}`;
      throw new RetryAfterError(why, res.headers.get('retry-after'));
    }
    return res;
  }
  throw new AenvError('IMAGE_REGISTRY_UNAVAILABLE', `too many redirects from ${req.url}`);
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'),
  );
}

/**
 * One fetch, no redirect followed, timing out while waiting for headers.
 * The caller's signal stays linked to the answer, so aborting it also stops
 * reading the body.
 */
async function fetchOnce(
  url: string,
  init: { method: string; headers: Record<string, string> },
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const abort = new AbortController();
  const host = new URL(url).host;
  const timer = setTimeout(
    () => abort.abort(new TransientError(`no answer from ${host} in ${timeoutMs} ms`)),
    timeoutMs,
  );
  signal?.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
  try {
    return await fetch(url, { ...init, redirect: 'manual', signal: abort.signal });
  } catch (err) {
    if (signal?.aborted === true) throw signal.reason;
    const reason: unknown = abort.signal.reason;
    if (reason instanceof TransientError) throw reason;
    throw new TransientError(`${host}: ${describeNetworkError(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** A network error's most useful text (undici hides the code in `cause`). */
export function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  if (cause !== undefined && typeof cause === 'object') {
    const code = typeof cause.code === 'string' ? `${cause.code}: ` : '';
    if (typeof cause.message === 'string') return `${code}${cause.message}`;
  }
  return err.message;
}
