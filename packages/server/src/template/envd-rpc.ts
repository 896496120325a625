/**
 * What a template build asks of envd inside its machine: run a process and
 * stream its output (`process.Process/Start`, a Connect server stream),
 * start one in the background and leave it running, stat a path, and read
 * and write files (`/files`). The Connect protocol is spoken with its JSON
 * codec: a streaming request and its answers are envelopes (one flag byte,
 * a 4-byte big-endian length, the JSON), the last answer carrying the
 * end-of-stream flag `0x02` and the outcome.
 *
 * Like `orchestrator/envd-client.ts`, every call opens a fresh connection:
 * a build machine's address is a slot address the next machine reuses.
 * The user a call acts as goes in `Authorization: Basic base64(user:)`.
 *
 * @module
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { AenvError } from '@aenv/shared';
import type { GuestAddress } from '../orchestrator/sandbox.js';

/** A command to run in the machine. */
export interface GuestCommand {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly envs: Readonly<Record<string, string>>;
  readonly cwd?: string | undefined;
  /** undefined: envd's default user. */
  readonly user: string | undefined;
}

/** How a process ended. */
export interface ProcessEnd {
  readonly exitCode: number;
  /** envd's status text (`exit status 1`, `signal: killed`). */
  readonly status: string;
}

/** Output of a running process. */
export type OutputListener = (stream: 'stdout' | 'stderr', data: Buffer) => void;

const END_STREAM = 0x02;

function basicUser(user: string): string {
  return `Basic ${Buffer.from(`${user}:`).toString('base64')}`;
}

function envelope(json: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(json));
  const head = Buffer.alloc(5);
  head.writeUInt8(0, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

function open(
  addr: GuestAddress,
  method: string,
  path: string,
  headers: Record<string, string>,
): { req: ClientRequest; res: Promise<IncomingMessage> } {
  const req = request({
    host: addr.host,
    port: addr.port,
    method,
    path,
    agent: false,
    headers: { connection: 'close', ...headers },
  });
  const res = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', resolve);
    req.on('error', (err) =>
      reject(new AenvError('SBX_ENVD_FAILED', `envd ${path}: ${err.message}`, { cause: err })),
    );
  });
  res.catch(() => undefined);
  return { req, res };
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of res) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function failure(res: IncomingMessage, what: string): Promise<AenvError> {
  const body = (await readAll(res)).toString('utf8').slice(0, 500);
  return new AenvError('SBX_ENVD_FAILED', `envd ${what} answered ${res.statusCode ?? 0}: ${body}`);
}

interface StreamHandlers {
  readonly onStart?: (pid: number) => void;
  readonly onOutput?: OutputListener;
}

/** Splits a Connect stream into its messages (flags + parsed JSON). */
async function* frames(res: IncomingMessage): AsyncGenerator<{ flags: number; msg: StartAnswer }> {
  let buf = Buffer.alloc(0);
  for await (const chunk of res) {
    buf = Buffer.concat([buf, chunk as Buffer]);
    while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
      const len = buf.readUInt32BE(1);
      const text = buf.subarray(5, 5 + len).toString('utf8');
      yield { flags: buf.readUInt8(0), msg: JSON.parse(text === '' ? '{}' : text) as StartAnswer };
      buf = buf.subarray(5 + len);
    }
  }
}

function onEvent(ev: StartAnswer['event'], h: StreamHandlers): ProcessEnd | undefined {
  if (ev === undefined) return undefined;
  if (ev.start !== undefined) h.onStart?.(ev.start.pid ?? 0);
  if (ev.data !== undefined) onData(ev.data, h);
  return ev.end === undefined
    ? undefined
    : { exitCode: ev.end.exitCode ?? 0, status: ev.end.status ?? '' };
}

function onData(
  data: { readonly stdout?: string; readonly stderr?: string },
  h: StreamHandlers,
): void {
  if (data.stdout !== undefined) h.onOutput?.('stdout', Buffer.from(data.stdout, 'base64'));
  if (data.stderr !== undefined) h.onOutput?.('stderr', Buffer.from(data.stderr, 'base64'));
}

/** Reads a Start stream until its end event; resolves with it. */
async function consumeStart(res: IncomingMessage, h: StreamHandlers): Promise<ProcessEnd> {
  let end: ProcessEnd | undefined;
  for await (const { flags, msg } of frames(res)) {
    if ((flags & END_STREAM) === 0) {
      end = onEvent(msg.event, h) ?? end;
      continue;
    }
    if (msg.error !== undefined) {
      const why = msg.error.message ?? msg.error.code ?? 'unknown';
      throw new AenvError('SBX_ENVD_FAILED', `envd could not run the process: ${why}`);
    }
    if (end === undefined)
      throw new AenvError('SBX_ENVD_FAILED', 'envd ended the process stream without an end event');
    return end;
  }
  if (end !== undefined) return end;
  throw new AenvError('SBX_ENVD_FAILED', 'the process stream broke before the process ended');
}

interface StartAnswer {
  readonly event?: {
    readonly start?: { readonly pid?: number };
    readonly data?: { readonly stdout?: string; readonly stderr?: string };
    readonly end?: { readonly exitCode?: number; readonly status?: string };
  };
  readonly error?: { readonly code?: string; readonly message?: string };
}

function startRequest(
  addr: GuestAddress,
  c: GuestCommand,
  timeoutMs: number | undefined,
  accessToken?: string,
) {
  const headers: Record<string, string> = {
    'content-type': 'application/connect+json',
    'connect-protocol-version': '1',
  };
  if (accessToken !== undefined) headers['x-access-token'] = accessToken;
  if (c.user !== undefined) headers.authorization = basicUser(c.user);
  if (timeoutMs !== undefined) headers['connect-timeout-ms'] = String(timeoutMs);
  const call = open(addr, 'POST', '/process.Process/Start', headers);
  call.req.end(
    envelope({
      process: {
        cmd: c.cmd,
        args: c.args,
        envs: c.envs,
        ...(c.cwd === undefined ? {} : { cwd: c.cwd }),
      },
    }),
  );
  return call;
}

/**
 * Runs a command to its end, streaming its output; `timeoutMs` bounds its
 * life (envd kills it then); `accessToken` is a secure sandbox's envd token
 * (build machines have none).
 * @throws {AenvError} `SBX_ENVD_FAILED` when envd cannot run it.
 */
export async function runGuestCommand(
  addr: GuestAddress,
  command: GuestCommand,
  options: { timeoutMs?: number; onOutput?: OutputListener; accessToken?: string } = {},
): Promise<ProcessEnd> {
  const { res } = startRequest(addr, command, options.timeoutMs, options.accessToken);
  const answer = await res;
  if (answer.statusCode !== 200) throw await failure(answer, 'Start');
  return consumeStart(answer, options.onOutput === undefined ? {} : { onOutput: options.onOutput });
}

/** A process left running in the machine. */
export interface BackgroundProcess {
  readonly pid: number;
  /** Resolves if it ends while watched (it failed to stay up). */
  readonly ended: Promise<ProcessEnd>;
  /** Stops watching (the connection closes; the process keeps running). */
  detach(): void;
}

/**
 * Starts a command that outlives the call (no deadline) and returns once
 * envd reports it started.
 * @throws {AenvError} `SBX_ENVD_FAILED`.
 */
export async function startGuestProcess(
  addr: GuestAddress,
  command: GuestCommand,
  onOutput?: OutputListener,
): Promise<BackgroundProcess> {
  const { req, res } = startRequest(addr, command, undefined);
  const answer = await res;
  if (answer.statusCode !== 200) throw await failure(answer, 'Start');
  let started: (pid: number) => void = () => undefined;
  const pid = new Promise<number>((r) => (started = r));
  const ended = consumeStart(answer, {
    onStart: (p) => started(p),
    ...(onOutput === undefined ? {} : { onOutput }),
  });
  ended.catch(() => undefined);
  const first = await Promise.race([pid, ended.then(() => -1)]);
  if (first < 0) {
    const end = await ended;
    throw new AenvError(
      'BUILD_STEP_FAILED',
      `the start command exited at once (${end.status || `exit ${end.exitCode}`})`,
    );
  }
  return {
    pid: first,
    ended,
    detach: () => {
      req.destroy();
      answer.destroy();
    },
  };
}

/** What `Stat` says of a path, or undefined when it does not exist. */
export async function statGuestPath(
  addr: GuestAddress,
  path: string,
  user = 'root',
): Promise<{ type: string } | undefined> {
  const { req, res } = open(addr, 'POST', '/filesystem.Filesystem/Stat', {
    'content-type': 'application/json',
    'connect-protocol-version': '1',
    authorization: basicUser(user),
  });
  req.end(JSON.stringify({ path }));
  const answer = await res;
  const body = (await readAll(answer)).toString('utf8');
  if (answer.statusCode === 404) return undefined;
  if (answer.statusCode !== 200)
    throw new AenvError(
      'SBX_ENVD_FAILED',
      `envd Stat ${path} answered ${answer.statusCode ?? 0}: ${body.slice(0, 300)}`,
    );
  const parsed = JSON.parse(body) as { entry?: { type?: string } };
  return { type: parsed.entry?.type ?? 'FILE_TYPE_UNSPECIFIED' };
}

/** Reads a file of the machine (as `user`), or undefined when missing. */
export async function readGuestFile(
  addr: GuestAddress,
  path: string,
  user = 'root',
): Promise<Buffer | undefined> {
  const q = new URLSearchParams({ path, username: user });
  const { req, res } = open(addr, 'GET', `/files?${q.toString()}`, {});
  req.end();
  const answer = await res;
  if (answer.statusCode === 404) {
    answer.resume();
    return undefined;
  }
  if (answer.statusCode !== 200) throw await failure(answer, `GET /files ${path}`);
  return readAll(answer);
}

/** Writes a file of the machine (as `user`: parents created and the file owned by that user). */
export async function writeGuestFile(
  addr: GuestAddress,
  path: string,
  data: Buffer | Readable | AsyncIterable<Buffer>,
  user = 'root',
): Promise<void> {
  const q = new URLSearchParams({ path, username: user });
  const { req, res } = open(addr, 'POST', `/files?${q.toString()}`, {
    'content-type': 'application/octet-stream',
  });
  if (Buffer.isBuffer(data)) req.end(data);
  else {
    try {
      for await (const chunk of data as AsyncIterable<Buffer>) {
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    } catch (err) {
      req.destroy();
      throw err;
    }
  }
  const answer = await res;
  if (answer.statusCode !== 200) throw await failure(answer, `POST /files ${path}`);
  answer.resume();
}
