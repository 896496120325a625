/**
 * A minimal envd client for tests, over a unix socket that a probe agent in
 * a network namespace forwards to the guest's envd (see `probe-agent.ts`
 * `forward`; a slot's host side at `slotIp:49983`, or a tap network's
 * guest address): the test process stays in the root namespace, and every
 * byte still travels a real path into the guest.
 *
 * It speaks just enough of envd's protocol (`docs/envd.md`;
 * `shared/reference/e2b-protocol.md` §3): `GET /health`, and the Connect
 * protocol with the JSON codec for `process.Process/Start` (server
 * streaming: 5-byte envelopes, flag 0x02 on the end-stream frame) and the
 * unary `SendInput` / `CloseStdin`. The `e2b` SDK is not used because it
 * cannot be pointed at a unix socket.
 *
 * @module
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a process ended (envd's `EndEvent`). */
export interface EnvdProcessEnd {
  readonly exitCode: number;
  readonly status: string;
  readonly error?: string;
}

/** A process started through envd. */
export interface EnvdProcess {
  readonly pid: number;
  /** Resolves with the end event, or rejects when the stream broke off. */
  readonly ended: Promise<EnvdProcessEnd>;
}

/** Options of {@link EnvdSocketClient.start}. */
export interface StartOptions {
  /** Keep stdin open for {@link EnvdSocketClient.sendInput}. @default false */
  readonly stdin?: boolean;
  /** The process's lifetime (`Connect-Timeout-Ms`). @default 0 (none) */
  readonly lifetimeMs?: number;
  /** Run as this user (Basic auth, as the e2b SDK sends it). @default envd's default user */
  readonly user?: string;
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
}

interface StreamMessage {
  event?: {
    start?: { pid?: number };
    data?: { stdout?: string; stderr?: string };
    end?: { exitCode?: number; status?: string; error?: string };
  };
  error?: { code?: string; message?: string };
}

/** Splits a Connect stream into its JSON messages; `end` is the end-stream frame. */
class EnvelopeReader {
  #buf = Buffer.alloc(0);

  *push(chunk: Buffer): Generator<Frame> {
    this.#buf = Buffer.concat([this.#buf, chunk]);
    while (this.#buf.length >= 5) {
      const len = this.#buf.readUInt32BE(1);
      if (this.#buf.length < 5 + len) return;
      const flags = this.#buf[0] ?? 0;
      const msg = JSON.parse(this.#buf.subarray(5, 5 + len).toString('utf8')) as StreamMessage;
      this.#buf = this.#buf.subarray(5 + len);
      yield { end: (flags & 0x02) !== 0, msg };
    }
  }
}

type Frame = { readonly end: boolean; readonly msg: StreamMessage };

interface FrameHandlers {
  readonly started: (pid: number) => void;
  readonly ended: (end: EnvdProcessEnd) => void;
  readonly failed: (err: Error) => void;
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
  readonly onStderr?: ((chunk: Buffer) => void) | undefined;
}

/** Routes one frame of a `Start` stream. */
function dispatch({ end, msg }: Frame, h: FrameHandlers): void {
  const ev = msg.event ?? {};
  if (end) {
    const why = msg.error === undefined ? 'ended without an end event' : JSON.stringify(msg.error);
    h.failed(new Error(`Start: ${why}`));
  } else if (ev.start !== undefined) {
    h.started(ev.start.pid ?? 0);
  } else if (ev.data !== undefined) {
    const { stdout, stderr } = ev.data;
    if (stdout !== undefined) h.onStdout?.(Buffer.from(stdout, 'base64'));
    if (stderr !== undefined) h.onStderr?.(Buffer.from(stderr, 'base64'));
  } else if (ev.end !== undefined) {
    const e = ev.end;
    h.ended({ exitCode: e.exitCode ?? 0, status: e.status ?? '', error: e.error });
  }
}

function envelope(body: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(body));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** envd at the far end of a unix socket. */
export class EnvdSocketClient {
  readonly socketPath: string;

  constructor(socketPath: string) {
    this.socketPath = socketPath;
  }

  /** One plain request; resolves with the status and body. */
  fetch(
    method: string,
    path: string,
    opts: { body?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { socketPath: this.socketPath, method, path, headers: { host: 'envd', ...opts.headers } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        },
      );
      req.setTimeout(opts.timeoutMs ?? 5000, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(opts.body);
    });
  }

  /** Polls `GET /health` until it answers 204; resolves with the wait in ms. */
  async waitHealthy(timeoutMs: number): Promise<number> {
    const t0 = performance.now();
    let last = 'no answer';
    while (performance.now() - t0 < timeoutMs) {
      try {
        const r = await this.fetch('GET', '/health', { timeoutMs: 1000 });
        if (r.status === 204) return performance.now() - t0;
        last = `status ${r.status}`;
      } catch (err) {
        last = String(err);
      }
      await sleep(50);
    }
    throw new Error(`envd at ${this.socketPath} not healthy within ${timeoutMs} ms (${last})`);
  }

  /** Calls a unary method of `process.Process`. */
  async unary(method: string, body: unknown): Promise<void> {
    const r = await this.fetch('POST', `/process.Process/${method}`, {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
    });
    if (r.status !== 200) throw new Error(`${method}: ${r.status} ${r.body}`);
  }

  /** Writes to a process's stdin. */
  sendInput(pid: number, data: string): Promise<void> {
    const stdin = Buffer.from(data).toString('base64');
    return this.unary('SendInput', { process: { pid }, input: { stdin } });
  }

  /** Closes a process's stdin (a probe agent exits then). */
  closeStdin(pid: number): Promise<void> {
    return this.unary('CloseStdin', { process: { pid } });
  }

  /** Starts `cmd args` as envd's default user; resolves once envd reports its pid. */
  start(cmd: string, args: readonly string[], opts: StartOptions = {}): Promise<EnvdProcess> {
    return new Promise((resolveStart, rejectStart) => {
      let resolveEnd: (e: EnvdProcessEnd) => void = () => undefined;
      let rejectEnd: (e: Error) => void = () => undefined;
      const ended = new Promise<EnvdProcessEnd>((res, rej) => {
        resolveEnd = res;
        rejectEnd = rej;
      });
      ended.catch(() => undefined);
      const fail = (err: Error): void => {
        rejectStart(err);
        rejectEnd(err);
      };
      const reader = new EnvelopeReader();
      const onMessage = (frame: Frame): void =>
        dispatch(frame, {
          started: (pid) => resolveStart({ pid, ended }),
          ended: resolveEnd,
          failed: fail,
          onStdout: opts.onStdout,
          onStderr: opts.onStderr,
        });
      const req = request(
        {
          socketPath: this.socketPath,
          method: 'POST',
          path: '/process.Process/Start',
          headers: {
            host: 'envd',
            'content-type': 'application/connect+json',
            'connect-protocol-version': '1',
            'connect-timeout-ms': String(opts.lifetimeMs ?? 0),
            ...(opts.user === undefined
              ? {}
              : { authorization: `Basic ${Buffer.from(`${opts.user}:`).toString('base64')}` }),
          },
        },
        (res) => {
          res.on('data', (d: Buffer) => {
            for (const m of reader.push(d)) onMessage(m);
          });
          res.on('end', () => fail(new Error(`Start: stream closed (status ${res.statusCode})`)));
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      const process = { cmd, args, envs: {} };
      req.end(envelope({ process, stdin: opts.stdin ?? false }));
    });
  }

  /** Runs a command to its end; resolves with its exit code and output. */
  async run(
    cmd: string,
    args: readonly string[],
    opts: { readonly user?: string } = {},
  ): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const p = await this.start(cmd, args, {
      ...opts,
      onStdout: (c) => (stdout += c.toString('utf8')),
      onStderr: (c) => (stderr += c.toString('utf8')),
    });
    const end = await p.ended;
    return { exitCode: end.exitCode, stdout, stderr };
  }
}
