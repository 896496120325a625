/**
 * Where the SDK finds the node and how it authenticates: explicit options
 * first, then the environment (`AENV_*`, then the `E2B_*` names the e2b
 * SDK reads, so one environment serves both SDKs), then defaults (a local
 * node on 127.0.0.1:8000; envd traffic through the same URL, routed by
 * headers).
 *
 * @module
 */
import type { FetchLike } from './api/http.js';

/** Options of {@link AenvClient}. Every field is optional. */
export interface ClientOptions {
  /** The node's API URL. @default $AENV_API_URL, $E2B_API_URL, http://127.0.0.1:8000 */
  readonly apiUrl?: string;
  /** The API key (`X-API-Key`). @default $AENV_API_KEY, $E2B_API_KEY */
  readonly apiKey?: string;
  /** Where envd traffic goes (header routing). @default $AENV_SANDBOX_URL, $E2B_SANDBOX_URL, the API URL */
  readonly sandboxUrl?: string;
  /** Domain of `{port}-{id}.{domain}` hosts when the node names none. @default $AENV_DOMAIN, $E2B_DOMAIN */
  readonly domain?: string;
  /** Client-side deadline of control-plane calls, in ms; 0 = none. @default 120000 */
  readonly requestTimeoutMs?: number;
  /** Headers added to every control-plane call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The `fetch` to use (proxies, tests). @default globalThis.fetch */
  readonly fetch?: FetchLike;
  /** Where environment variables are read from. @default process.env when it exists */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** {@link ClientOptions} with every default applied. */
export interface ResolvedClientConfig {
  readonly apiUrl: string;
  readonly apiKey: string | undefined;
  readonly sandboxUrl: string;
  readonly domain: string | undefined;
  readonly requestTimeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly fetch: FetchLike;
}

/** The default node URL: a node started with `aenv server` on this machine. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8000';

/** The default control-plane deadline. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

function processEnv(): Readonly<Record<string, string | undefined>> {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env ?? {};
}

function firstSet(...values: (string | undefined)[]): string | undefined {
  return values.find((v) => v !== undefined && v !== '');
}

/** Applies environment and defaults to client options. */
export function resolveClientConfig(options: ClientOptions = {}): ResolvedClientConfig {
  const env = options.env ?? processEnv();
  const apiUrl = trimSlash(
    firstSet(options.apiUrl, env.AENV_API_URL, env.E2B_API_URL) ?? DEFAULT_API_URL,
  );
  return {
    apiUrl,
    apiKey: firstSet(options.apiKey, env.AENV_API_KEY, env.E2B_API_KEY),
    sandboxUrl: trimSlash(
      firstSet(options.sandboxUrl, env.AENV_SANDBOX_URL, env.E2B_SANDBOX_URL) ?? apiUrl,
    ),
    domain: firstSet(options.domain, env.AENV_DOMAIN, env.E2B_DOMAIN),
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    headers: options.headers ?? {},
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
