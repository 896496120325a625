/**
 * `fetch` with the SDK's failure semantics, shared by the REST client and
 * the Connect transport: a node that cannot be reached is a
 * {@link ConnectionError} naming the URL and the system error, a passed
 * deadline is a {@link TimeoutError}, the caller's own abort rethrows the
 * caller's reason.
 *
 * @module
 */
import { ConnectionError, TimeoutError } from '../errors.js';

/** The `fetch` signature the SDK calls (injectable for proxies and tests). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Per-call options of every SDK method that talks to the node. */
export interface RequestOptions {
  /** Aborts the call. */
  readonly signal?: AbortSignal;
  /** Client-side deadline of the whole call, in milliseconds; 0 = none. */
  readonly requestTimeoutMs?: number;
}

/** One request: where, what, and how to describe it in errors. */
export interface SendRequest {
  readonly url: string;
  readonly init: RequestInit;
  /** "POST /v2/sandboxes", for messages. */
  readonly what: string;
}

/**
 * Sends a request. The returned response's body is still covered by the
 * deadline and the signal.
 */
export async function send(
  fetchFn: FetchLike,
  request: SendRequest,
  options: RequestOptions = {},
): Promise<Response> {
  const timeoutMs = options.requestTimeoutMs ?? 0;
  const deadline = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
  const signals = [options.signal, deadline].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  try {
    return await fetchFn(request.url, { ...request.init, ...(signal ? { signal } : {}) });
  } catch (err) {
    throw failureOf(err, request, { deadline, timeoutMs, signal: options.signal });
  }
}

interface AbortState {
  readonly deadline: AbortSignal | undefined;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** The SDK error for a request (or body read) that failed before an answer. */
export function failureOf(err: unknown, request: SendRequest, state: AbortState): unknown {
  if (state.signal?.aborted === true) return state.signal.reason as unknown;
  if (state.deadline?.aborted === true) {
    return new TimeoutError(`${request.what} timed out after ${state.timeoutMs} ms`, {
      cause: err,
    });
  }
  const origin = safeOrigin(request.url);
  return new ConnectionError(`cannot reach ${origin} (${systemReason(err)})`, { cause: err });
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** The most specific reason in a fetch failure: `ECONNREFUSED 127.0.0.1:1`, not "fetch failed". */
function systemReason(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e instanceof Error; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string')
      return e.message.includes(code) ? e.message : `${code}: ${e.message}`;
    if (e.cause === undefined) return e.message;
    e = e.cause;
  }
  return String(e);
}

/** Reads an error answer's body: parsed JSON when it is JSON, else the text. */
export async function readAnswerBody(res: Response): Promise<unknown> {
  let text: string;
  try {
    text = await res.text();
  } catch {
    return undefined;
  }
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
