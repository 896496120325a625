/**
 * A small client of the Connect protocol (JSON codec), enough for envd's
 * services: unary calls and server-streaming calls over `fetch`, the same
 * wire the e2b SDK's connect-web transport speaks (e2b-protocol.md §3.1).
 *
 * - Unary: `POST {base}/{service}/{method}`, `Content-Type:
 *   application/json`, one JSON message each way; an error is a non-200
 *   answer with `{code: "<connect code>", message}`.
 * - Server streaming: `Content-Type: application/connect+json`, the request
 *   as one envelope; the answer is envelopes of messages and one final
 *   end-stream envelope `{}` or `{error: {code, message}}`. A stream that
 *   ends without it failed.
 *
 * `Connect-Timeout-Ms` is sent when a call has a timeout. On a stream it is
 * not a client-side deadline: envd uses it as the lifetime of the process a
 * `Start` launches (and ends the stream with `deadline_exceeded`).
 *
 * @module
 */
import {
  failureOf,
  readAnswerBody,
  send,
  type FetchLike,
  type RequestOptions,
} from '../api/http.js';
import { errorFromAnswer, errorFromConnect, type ErrorContext } from '../error-mapping.js';
import { InternalError } from '../errors.js';
import { COMPRESSED_FLAG, END_STREAM_FLAG, EnvelopeDecoder, encodeEnvelope } from './envelope.js';

/** Where a transport sends its calls. */
export interface ConnectTransportOptions {
  /** Base URL of the service host (a sandbox URL; envd behind the node's proxy). */
  readonly baseUrl: string;
  readonly fetch: FetchLike;
  /** Headers for every call (routing, token), read at each call since they may change. */
  readonly headers: () => Readonly<Record<string, string>>;
}

/** Options of one call. */
export interface CallOptions extends RequestOptions, ErrorContext {
  /**
   * `Connect-Timeout-Ms` of a stream (for `Start`: the process's lifetime);
   * unary calls send their `requestTimeoutMs` instead.
   */
  readonly timeoutMs?: number;
  /** Extra headers for this call (e.g. `Authorization` selecting a user). */
  readonly headers?: Readonly<Record<string, string>>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Calls Connect methods (`process.Process/Start`) with the JSON codec. */
export class ConnectTransport {
  readonly #o: ConnectTransportOptions;

  constructor(options: ConnectTransportOptions) {
    this.#o = options;
  }

  /** A unary call: one message in, one out. */
  async unary<O>(method: string, input: unknown, options: CallOptions = {}): Promise<O> {
    const request = {
      url: this.#url(method),
      what: method,
      init: {
        method: 'POST',
        headers: this.#headers('application/json', options, options.requestTimeoutMs),
        body: JSON.stringify(input),
      },
    };
    const res = await send(this.#o.fetch, request, options);
    if (res.status !== 200) throw errorFromAnswer(res.status, await readAnswerBody(res), options);
    try {
      return (await res.json()) as O;
    } catch (err) {
      throw failureOf(err, request, { deadline: undefined, timeoutMs: 0, signal: options.signal });
    }
  }

  /**
   * A server-streaming call: yields each message; throws the end-stream's
   * error. Breaking out of the loop cancels the call.
   */
  async *stream<O>(method: string, input: unknown, options: CallOptions = {}): AsyncGenerator<O> {
    const request = {
      url: this.#url(method),
      what: method,
      init: {
        method: 'POST',
        headers: {
          ...this.#headers('application/connect+json', options, options.timeoutMs),
          'keepalive-ping-interval': '50',
        },
        body: encodeEnvelope(0, encoder.encode(JSON.stringify(input))),
      },
    };
    // The timeout is the server's business on streams (see the module comment).
    const res = await send(this.#o.fetch, request, { ...options, requestTimeoutMs: 0 });
    const type = res.headers.get('content-type') ?? '';
    if (res.status !== 200 || !type.startsWith('application/connect+json')) {
      throw errorFromAnswer(res.status, await readAnswerBody(res), options);
    }
    if (res.body === null) throw new InternalError(`${method}: the answer has no body`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const frames = new EnvelopeDecoder();
    try {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw failureOf(err, request, {
            deadline: undefined,
            timeoutMs: 0,
            signal: options.signal,
          });
        }
        if (chunk.done) break;
        for (const frame of frames.push(chunk.value)) {
          if ((frame.flags & COMPRESSED_FLAG) !== 0) {
            throw new InternalError(`${method}: a compressed message arrived uncalled for`);
          }
          if ((frame.flags & END_STREAM_FLAG) !== 0) return endOfStream(frame.data, options);
          yield JSON.parse(decoder.decode(frame.data)) as O;
        }
      }
      throw new InternalError(`${method}: the stream ended without an end-stream message`);
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  #url(method: string): string {
    return `${this.#o.baseUrl.replace(/\/+$/, '')}/${method}`;
  }

  #headers(
    contentType: string,
    options: CallOptions,
    timeoutMs: number | undefined,
  ): Record<string, string> {
    const timeout = timeoutMs ?? 0;
    return {
      ...this.#o.headers(),
      ...options.headers,
      'content-type': contentType,
      'connect-protocol-version': '1',
      ...(timeout > 0 ? { 'connect-timeout-ms': String(timeout) } : {}),
    };
  }
}

interface EndStream {
  readonly error?: { readonly code?: string; readonly message?: string };
}

function endOfStream(data: Uint8Array, context: ErrorContext): void {
  const text = decoder.decode(data);
  const end = (text.trim() === '' ? {} : JSON.parse(text)) as EndStream;
  if (end.error !== undefined) {
    throw errorFromConnect(end.error.code ?? 'unknown', end.error.message ?? '', context);
  }
}
