/**
 * The answer of long operations (image pulls, streamed template builds):
 * newline-delimited JSON (`application/x-ndjson`), `{"type":"progress", ...}`
 * lines while the work runs, then one `{"type":"result", ...}` line, or
 * `{"type":"error", "error": {code, message, error_code}}` when it failed.
 * The SDK's `readProgressAnswer` reads it.
 *
 * @module
 */
import { toHttpError } from '@aenv/shared';
import type { Reply } from './router.js';

/** Emits one progress event. */
export type Emit = (event: Readonly<Record<string, unknown>>) => void;

/**
 * A 200 streamed reply running `work`: what it emits becomes progress
 * lines, what it returns the result line, what it throws the error line.
 */
export function progressReply(
  work: (emit: Emit) => Promise<Readonly<Record<string, unknown>>>,
): Reply {
  return {
    status: 200,
    headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' },
    stream: progressLines(work),
  };
}

async function* progressLines(
  work: (emit: Emit) => Promise<Readonly<Record<string, unknown>>>,
): AsyncGenerator<string> {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  const push = (line: unknown): void => {
    queue.push(`${JSON.stringify(line)}\n`);
    wake?.();
  };
  let done = false;
  const finished = work((e) => push({ type: 'progress', ...e })).then(
    (result) => push({ type: 'result', ...result }),
    (err: unknown) => push({ type: 'error', error: toHttpError(err).body }),
  );
  void finished.finally(() => {
    done = true;
    wake?.();
  });
  for (;;) {
    while (queue.length > 0) yield queue.shift() as string;
    if (done) return;
    await new Promise<void>((r) => (wake = r));
    wake = undefined;
  }
}
