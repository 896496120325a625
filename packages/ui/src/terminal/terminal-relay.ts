/**
 * `/ui/terminal/{id}` (WebSocket): a terminal in a sandbox for the page's
 * xterm.js. The relay looks the sandbox up with the session's key (its
 * state and envd token: the token stays here), opens a PTY through envd
 * (`envd-pty.ts`) and relays bytes both ways until either side ends; a
 * closed socket kills the shell.
 *
 * Wire, one socket per terminal:
 * - binary frames: terminal bytes (page → shell input, shell → page output);
 * - text frames, JSON: page → `{type:"resize", cols, rows}`; relay →
 *   `{type:"ready", pid}`, `{type:"exit", exitCode, status, error?}`,
 *   `{type:"error", message, code?}` (then the socket closes).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { ApiCallError, type ApiClient } from '../api/api-client.js';
import { EnvdCallError, EnvdPty } from './envd-pty.js';

/** Largest message a page may send (a paste). */
const MAX_MESSAGE_BYTES = 1024 * 1024;

/** What a terminal is opened with. */
export interface TerminalRequest {
  readonly api: ApiClient;
  readonly sandboxId: string;
  readonly cols: number;
  readonly rows: number;
}

function clampSize(n: number, fallback: number): number {
  return Number.isInteger(n) && n >= 2 && n <= 1000 ? n : fallback;
}

/** The terminal size a request asks for (`?cols=&rows=`), bounded. */
export function terminalSize(query: URLSearchParams): { cols: number; rows: number } {
  return {
    cols: clampSize(Number(query.get('cols')), 80),
    rows: clampSize(Number(query.get('rows')), 24),
  };
}

function sendControl(ws: WebSocket, message: Record<string, unknown>): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Terminal WebSockets of one host. */
export class TerminalRelay {
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  readonly #open = new Set<WebSocket>();

  /** Completes a WebSocket upgrade and serves a terminal on it. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, t: TerminalRequest): void {
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.#open.add(ws);
      ws.once('close', () => this.#open.delete(ws));
      void this.#serve(ws, t);
    });
  }

  /** Open terminals. */
  get size(): number {
    return this.#open.size;
  }

  /** Closes every terminal (their shells are killed). */
  close(): void {
    for (const ws of this.#open) ws.close(1001, 'server closing');
    this.#wss.close();
  }

  async #serve(ws: WebSocket, t: TerminalRequest): Promise<void> {
    const early: Buffer[] = [];
    let pty: EnvdPty | undefined;
    let closed = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        if (pty === undefined) early.push(toBuffer(data));
        else pty.write(toBuffer(data));
        return;
      }
      onControl(toBuffer(data).toString('utf8'), pty);
    });
    ws.once('close', () => {
      closed = true;
      void pty?.kill();
    });
    try {
      pty = await openPty(ws, t);
    } catch (err) {
      fail(ws, err);
      return;
    }
    if (closed) return void pty.kill();
    sendControl(ws, { type: 'ready', pid: pty.pid });
    for (const b of early.splice(0)) pty.write(b);
  }
}

async function openPty(ws: WebSocket, t: TerminalRequest): Promise<EnvdPty> {
  const { body } = await t.api.call<{ state?: string; envdAccessToken?: string }>(
    'GET',
    `/sandboxes/${encodeURIComponent(t.sandboxId)}`,
  );
  if (body.state !== 'running') {
    throw new EnvdCallError(
      'failed_precondition',
      `sandbox ${t.sandboxId} is ${body.state ?? 'not running'}; resume it to open a terminal`,
    );
  }
  return EnvdPty.open(
    { apiUrl: t.api.apiUrl(), sandboxId: t.sandboxId, accessToken: body.envdAccessToken },
    { cols: t.cols, rows: t.rows },
    {
      onData: (bytes) => {
        if (ws.readyState === ws.OPEN) ws.send(bytes, { binary: true });
      },
      onEnd: (end) => {
        sendControl(ws, { type: 'exit', ...end });
        ws.close(1000, 'shell ended');
      },
    },
  );
}

function onControl(text: string, pty: EnvdPty | undefined): void {
  let msg: { type?: unknown; cols?: unknown; rows?: unknown };
  try {
    msg = JSON.parse(text) as typeof msg;
  } catch {
    return;
  }
  if (msg.type === 'resize' && pty !== undefined) {
    const cols = clampSize(Number(msg.cols), 80);
    const rows = clampSize(Number(msg.rows), 24);
    void pty.resize(cols, rows).catch(() => undefined);
  }
}

function fail(ws: WebSocket, err: unknown): void {
  const code =
    err instanceof ApiCallError
      ? err.errorCode
      : err instanceof EnvdCallError
        ? err.connectCode
        : undefined;
  const message = err instanceof Error ? err.message : String(err);
  sendControl(ws, { type: 'error', message, ...(code === undefined ? {} : { code }) });
  ws.close(1011, 'terminal failed');
}
