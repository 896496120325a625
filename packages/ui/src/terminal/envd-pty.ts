/**
 * A terminal in a sandbox, opened the way the e2b SDKs open one: envd's
 * `process.Process/Start` with a PTY size (`/bin/bash -i -l`), reached
 * through the host's data plane (`E2b-Sandbox-Id`, `E2b-Sandbox-Port:
 * 49983`, the sandbox's `X-Access-Token`) with the Connect protocol's JSON
 * codec. Output arrives as `data.pty` events (base64); input goes out with
 * `SendInput`, one call at a time and in order (keystrokes typed while a
 * call is in flight are sent together next); `Update` resizes; `kill`
 * sends SIGKILL to the shell (a client that only disconnects would leave
 * it running: envd detaches, it does not kill).
 *
 * @module
 */
import { END_STREAM, FrameDecoder, encodeFrame } from './connect-frames.js';

/** The port envd listens on in every sandbox. */
export const ENVD_PORT = 49983;

/** Where the terminal's sandbox is. */
export interface PtyTarget {
  /** The data plane: the node's or the gateway's URL. */
  readonly apiUrl: string;
  readonly sandboxId: string;
  readonly accessToken: string | undefined;
}

/** What the terminal reports. */
export interface PtyEvents {
  readonly onData: (bytes: Buffer) => void;
  /** The shell ended (or the stream failed): `exitCode` -1 for signals, `error` for failures. */
  readonly onEnd: (end: { exitCode: number; status: string; error?: string }) => void;
}

interface ProcessEvent {
  readonly start?: { readonly pid?: number };
  readonly data?: { readonly pty?: string; readonly stdout?: string; readonly stderr?: string };
  readonly end?: { readonly exitCode?: number; readonly status?: string; readonly error?: string };
}

/** A failed Connect call. */
export class EnvdCallError extends Error {
  constructor(
    readonly connectCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'EnvdCallError';
  }
}

function headers(t: PtyTarget, contentType: string): Record<string, string> {
  return {
    'e2b-sandbox-id': t.sandboxId,
    'e2b-sandbox-port': String(ENVD_PORT),
    ...(t.accessToken === undefined ? {} : { 'x-access-token': t.accessToken }),
    'content-type': contentType,
    'connect-protocol-version': '1',
  };
}

async function failure(res: Response, what: string): Promise<EnvdCallError> {
  const text = await res.text().catch(() => '');
  try {
    const e = JSON.parse(text) as { code?: string; message?: string };
    return new EnvdCallError(e.code ?? 'unknown', `${what}: ${e.message ?? text}`);
  } catch {
    return new EnvdCallError('unavailable', `${what}: HTTP ${res.status} ${text.slice(0, 200)}`);
  }
}

/** An open terminal. */
export class EnvdPty {
  readonly pid: number;
  readonly #target: PtyTarget;
  readonly #abort: AbortController;
  #queued: Buffer[] = [];
  #draining = false;

  private constructor(pid: number, target: PtyTarget, abort: AbortController) {
    this.pid = pid;
    this.#target = target;
    this.#abort = abort;
  }

  /**
   * Starts a login shell in a `cols`×`rows` terminal; resolves once envd
   * reports its pid. Output and the end are reported through `events`.
   * @throws {EnvdCallError} when envd refuses or the sandbox is unreachable.
   */
  static async open(
    target: PtyTarget,
    size: { cols: number; rows: number },
    events: PtyEvents,
  ): Promise<EnvdPty> {
    const abort = new AbortController();
    const request = {
      process: {
        cmd: '/bin/bash',
        args: ['-i', '-l'],
        envs: { TERM: 'xterm-256color', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
      },
      pty: { size },
    };
    const res = await fetch(new URL('/process.Process/Start', target.apiUrl), {
      method: 'POST',
      headers: { ...headers(target, 'application/connect+json'), 'keepalive-ping-interval': '30' },
      body: encodeFrame(0, Buffer.from(JSON.stringify(request))),
      signal: abort.signal,
    });
    const type = res.headers.get('content-type') ?? '';
    if (res.status !== 200 || !type.startsWith('application/connect+json') || res.body === null) {
      throw await failure(res, 'starting the terminal');
    }
    const reader = new EventReader(res.body.getReader());
    let pid: number;
    try {
      pid = await readUntilStart(reader);
    } catch (err) {
      abort.abort();
      throw err instanceof StreamEnd
        ? new EnvdCallError(err.detail.code ?? 'unknown', err.message)
        : err;
    }
    const pty = new EnvdPty(pid, target, abort);
    void pumpEvents(reader, events).finally(() => abort.abort());
    return pty;
  }

  /** Types into the terminal (in order with earlier input). */
  write(bytes: Buffer): void {
    this.#queued.push(bytes);
    if (this.#draining) return;
    this.#draining = true;
    // Events arrive in macrotasks, so none lands between the drain's last check and this reset.
    void this.#drain().finally(() => (this.#draining = false));
  }

  /** Changes the terminal size. */
  async resize(cols: number, rows: number): Promise<void> {
    await this.#unary('Update', { process: { pid: this.pid }, pty: { size: { cols, rows } } });
  }

  /** Kills the shell and stops reading. Never throws. */
  async kill(): Promise<void> {
    await this.#unary('SendSignal', { process: { pid: this.pid }, signal: 'SIGNAL_SIGKILL' }).catch(
      () => undefined,
    );
    this.#abort.abort();
  }

  async #drain(): Promise<void> {
    while (this.#queued.length > 0) {
      const data = Buffer.concat(this.#queued);
      this.#queued = [];
      await this.#unary('SendInput', {
        process: { pid: this.pid },
        input: { pty: data.toString('base64') },
      }).catch(() => undefined);
    }
  }

  async #unary(method: string, body: unknown): Promise<void> {
    const res = await fetch(new URL(`/process.Process/${method}`, this.#target.apiUrl), {
      method: 'POST',
      headers: headers(this.#target, 'application/json'),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    if (res.status !== 200) throw await failure(res, method);
    await res.arrayBuffer();
  }
}

class StreamEnd extends Error {
  constructor(readonly detail: { code?: string; message?: string }) {
    super(`${detail.code ?? 'unknown'}: ${detail.message ?? ''}`);
  }
}

/** The messages of a `Start` stream, one at a time. */
class EventReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new FrameDecoder();
  #backlog: ProcessEvent[] = [];

  constructor(reader: ReadableStreamDefaultReader<Uint8Array>) {
    this.#reader = reader;
  }

  /**
   * The next event; undefined when the stream ended cleanly.
   * @throws {StreamEnd} when the stream ended with an error.
   */
  async next(): Promise<ProcessEvent | undefined> {
    while (this.#backlog.length === 0) {
      const chunk = await this.#reader.read();
      if (chunk.done) return undefined;
      for (const f of this.#decoder.push(chunk.value)) {
        const parsed = JSON.parse(f.data.toString('utf8') || '{}') as {
          event?: ProcessEvent;
          error?: { code?: string; message?: string };
        };
        if ((f.flags & END_STREAM) !== 0) {
          if (parsed.error !== undefined) throw new StreamEnd(parsed.error);
          return undefined;
        }
        if (parsed.event !== undefined) this.#backlog.push(parsed.event);
      }
    }
    return this.#backlog.shift();
  }

  cancel(): void {
    this.#reader.cancel().catch(() => undefined);
  }
}

/** Reads events until the start event; returns the shell's pid. */
async function readUntilStart(events: EventReader): Promise<number> {
  for (;;) {
    const m = await events.next();
    if (m === undefined)
      throw new EnvdCallError('unavailable', 'the terminal stream ended at start');
    if (m.start?.pid !== undefined) return m.start.pid;
    if (m.end !== undefined) {
      throw new EnvdCallError('aborted', `the shell ended at start: ${m.end.status ?? ''}`);
    }
  }
}

function endOf(m: ProcessEvent): { exitCode: number; status: string; error?: string } {
  return {
    exitCode: m.end?.exitCode ?? 0,
    status: m.end?.status ?? 'exited',
    ...(m.end?.error === undefined ? {} : { error: m.end.error }),
  };
}

/** Delivers output until the end event or the stream's end. */
async function pumpEvents(reader: EventReader, events: PtyEvents): Promise<void> {
  try {
    for (;;) {
      const m = await reader.next();
      if (m === undefined) return events.onEnd({ exitCode: -1, status: 'stream ended' });
      const out = m.data?.pty ?? m.data?.stdout ?? m.data?.stderr;
      if (out !== undefined) events.onData(Buffer.from(out, 'base64'));
      if (m.end !== undefined) return events.onEnd(endOf(m));
    }
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    events.onEnd({ exitCode: -1, status: 'failed', error });
  } finally {
    reader.cancel();
  }
}
