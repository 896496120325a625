/**
 * Long operations (image pulls, template builds) answer a stream of
 * newline-delimited JSON: `{"type":"progress", ...}` lines while they run,
 * then one `{"type":"result", ...}` or `{"type":"error", "error": {code,
 * message, error_code}}` line. A node may also answer plain JSON (the
 * result, at once); both are read here.
 *
 * @module
 */
import { errorFromAnswer, type ErrorContext } from '../error-mapping.js';
import { InternalError } from '../errors.js';

/** One progress report of a long operation. */
export interface ProgressEvent {
  /** What is being done (`pull`, `layer sha256:…`, `RUN apt-get …`). */
  readonly stage: string;
  readonly status?: 'start' | 'progress' | 'done';
  readonly bytes?: number;
  readonly totalBytes?: number;
  /** A line of output (a build step's stdout). */
  readonly message?: string;
  /** What a layer's stage is doing: `download`, `convert`, `cached`, `resolve`. */
  readonly phase?: string;
  /** The build step a log line belongs to (`base`, `1`, `2`, …, `finalize`). */
  readonly step?: string;
}

interface StreamLine {
  readonly type?: string;
  readonly error?: {
    readonly code?: number;
    readonly message?: string;
    readonly error_code?: string;
  };
  readonly [key: string]: unknown;
}

/** Reads a long operation's answer: reports progress, resolves with the result's body. */
export async function readProgressAnswer(
  res: Response,
  onProgress: ((e: ProgressEvent) => void) | undefined,
  context: ErrorContext,
): Promise<unknown> {
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('application/x-ndjson')) return res.json();
  if (res.body === null) throw new InternalError('the progress stream has no body');
  let result: unknown;
  const decoder = new TextDecoder();
  let pending = '';
  const handle = (line: string): void => {
    if (line.trim() === '') return;
    const parsed = JSON.parse(line) as StreamLine;
    if (parsed.type === 'progress') onProgress?.(parsed as unknown as ProgressEvent);
    else if (parsed.type === 'error') {
      throw errorFromAnswer(parsed.error?.code ?? 500, parsed.error ?? {}, context);
    } else if (parsed.type === 'result') result = parsed;
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    lines.forEach(handle);
  }
  handle(pending + decoder.decode());
  if (result === undefined) throw new InternalError('the operation ended without a result');
  return result;
}
