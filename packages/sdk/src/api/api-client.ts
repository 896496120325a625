/**
 * The node's REST control plane: JSON in, JSON out, `X-API-Key` on every
 * call, every non-2xx answer turned into a typed error (see
 * `error-mapping.ts`).
 *
 * @module
 */
import type { ResolvedClientConfig } from '../config.js';
import { errorFromAnswer, type ErrorContext } from '../error-mapping.js';
import { AuthenticationError, InternalError } from '../errors.js';
import { readAnswerBody, send, type RequestOptions } from './http.js';

/** One control-plane call. */
export interface ApiCall extends RequestOptions, ErrorContext {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path with its parameters already encoded (see {@link pathOf}). */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** A JSON body. */
  readonly body?: unknown;
  /** A body that is not JSON (an archive), with its content type; instead of `body`. */
  readonly rawBody?: { readonly data: Uint8Array; readonly contentType: string };
  /** `Accept`; JSON by default. */
  readonly accept?: string;
  /** Headers of this call only (`Idempotency-Key`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A successful answer. */
export interface ApiAnswer<T> {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, the text of a text answer, or undefined when empty. */
  readonly body: T;
}

/** Builds a path from a template's literal parts and encoded parameters. */
export function pathOf(strings: TemplateStringsArray, ...params: (string | number)[]): string {
  let out = strings[0] ?? '';
  params.forEach((p, i) => {
    out += encodeURIComponent(String(p)) + (strings[i + 1] ?? '');
  });
  return out;
}

/** Calls the node's REST API. */
export class ApiClient {
  readonly config: ResolvedClientConfig;

  constructor(config: ResolvedClientConfig) {
    this.config = config;
  }

  /** Sends a call and returns its answer; throws the typed error of a non-2xx answer. */
  async call<T>(call: ApiCall): Promise<ApiAnswer<T>> {
    const res = await this.open(call);
    const body = await readAnswerBody(res);
    return { status: res.status, headers: res.headers, body: body as T };
  }

  /** Like {@link call} but leaves a 2xx body unread (streams, large text). */
  async open(call: ApiCall): Promise<Response> {
    const key = this.config.apiKey;
    if (key === undefined) {
      throw new AuthenticationError(
        'no API key: pass apiKey or set AENV_API_KEY (a local node keeps its key in $AENV_HOME/api-key)',
        { code: 'SDK_NO_API_KEY' },
      );
    }
    const headers: Record<string, string> = {
      ...this.config.headers,
      ...call.headers,
      'x-api-key': key,
      accept: call.accept ?? 'application/json',
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.rawBody !== undefined) headers['content-type'] = call.rawBody.contentType;
    const res = await send(
      this.config.fetch,
      {
        url: this.#url(call),
        what: `${call.method} ${call.path}`,
        init: {
          method: call.method,
          headers,
          ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
          ...(call.rawBody === undefined ? {} : { body: call.rawBody.data }),
        },
      },
      { ...call, requestTimeoutMs: call.requestTimeoutMs ?? this.config.requestTimeoutMs },
    );
    if (res.status < 200 || res.status > 299) {
      throw errorFromAnswer(res.status, await readAnswerBody(res), call);
    }
    return res;
  }

  #url(call: ApiCall): string {
    const url = new URL(`${this.config.apiUrl}${call.path}`);
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    return url.toString();
  }
}

/** Fails unless an answer body is a JSON object or array as expected. */
export function expectJson<T>(answer: ApiAnswer<unknown>, what: string, array = false): T {
  const ok = array
    ? Array.isArray(answer.body)
    : typeof answer.body === 'object' && answer.body !== null;
  if (!ok) throw new InternalError(`${what}: unexpected answer from the node`);
  return answer.body as T;
}
