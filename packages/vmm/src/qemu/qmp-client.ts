/**
 * A small QMP client over a unix socket, private to the qemu driver
 * (style R2: each driver keeps its wire client to itself).
 *
 * Contract:
 * - `connect` retries until the socket accepts (QEMU creates it a few ms
 *   after spawn), gives up early when `abortIf` reports a reason (the QEMU
 *   process died), reads the greeting and negotiates capabilities;
 * - commands carry an increasing `id`; replies are matched by it, so
 *   commands may overlap; each has a timeout (`VMM_TIMEOUT`);
 * - a QMP error reply rejects with `VMM_QMP_ERROR` carrying its class;
 * - when the socket closes every pending command and event wait rejects
 *   with `VMM_QMP_ERROR` ("connection closed"); the owner may translate it.
 *
 * @module
 */
import { createConnection, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';
import { encodeQmpCommand, QmpLineReader, type QmpEvent, type QmpReply } from './qmp-framing.js';

/** Options of {@link QmpClient.connect}. */
export interface QmpConnectOptions {
  /** Give up connecting after this long. @default 10 000 */
  readonly timeoutMs?: number;
  /** Called between attempts; a returned string aborts with that reason. */
  readonly abortIf?: () => string | undefined;
  readonly signal?: AbortSignal;
}

interface Pending {
  readonly command: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: AenvError) => void;
  readonly timer: NodeJS.Timeout;
}

type EventListener = (event: QmpEvent) => void;

const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;

/** See the module comment. */
export class QmpClient {
  readonly #socket: Socket;
  readonly #reader = new QmpLineReader();
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<EventListener>();
  readonly #closeListeners = new Set<() => void>();
  #nextId = 1;
  #closedReason: string | undefined;
  #greeting: { resolve: () => void; reject: (err: Error) => void } | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('close', () => this.#onClose('connection closed'));
    socket.on('error', (err) => this.#onClose(`socket error: ${err.message}`));
  }

  /**
   * Connects, reads the greeting and leaves capability negotiation mode.
   * @throws {AenvError} `VMM_TIMEOUT`, `VMM_QMP_ERROR`, or `VMM_START_FAILED` via `abortIf`.
   */
  static async connect(path: string, options: QmpConnectOptions = {}): Promise<QmpClient> {
    const deadline = performance.now() + (options.timeoutMs ?? 10_000);
    for (;;) {
      options.signal?.throwIfAborted();
      const reason = options.abortIf?.();
      if (reason !== undefined) {
        throw new AenvError('VMM_START_FAILED', `QMP ${path}: ${reason}`, { fields: { path } });
      }
      const socket = await tryConnect(path);
      if (socket !== undefined) {
        const client = new QmpClient(socket);
        try {
          await client.#handshake();
          return client;
        } catch (err) {
          client.close();
          throw err;
        }
      }
      if (performance.now() > deadline) {
        throw new AenvError(
          'VMM_TIMEOUT',
          `QMP socket ${path} did not accept connections in time`,
          {
            fields: { path },
          },
        );
      }
      await sleep(5);
    }
  }

  async #handshake(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#greeting = { resolve, reject };
      const timer = setTimeout(() => reject(new Error('no QMP greeting within 10 s')), 10_000);
      timer.unref();
    }).catch((err: unknown) => {
      throw new AenvError('VMM_QMP_ERROR', `QMP handshake failed: ${(err as Error).message}`, {
        cause: err,
      });
    });
    await this.execute('qmp_capabilities');
  }

  /**
   * Runs a command and resolves with its `return` value.
   * @throws {AenvError} `VMM_QMP_ERROR` (error reply or closed connection), `VMM_TIMEOUT`.
   */
  execute<T = unknown>(
    command: string,
    args?: object,
    timeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
  ): Promise<T> {
    if (this.#closedReason !== undefined) {
      return Promise.reject(qmpError(command, `QMP ${this.#closedReason}`));
    }
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(
          new AenvError('VMM_TIMEOUT', `QMP ${command} did not answer within ${timeoutMs} ms`, {
            fields: { command },
          }),
        );
      }, timeoutMs);
      this.#pending.set(id, { command, resolve: resolve as (v: unknown) => void, reject, timer });
      this.#socket.write(encodeQmpCommand(command, args, id));
    });
  }

  /** Subscribes to events; returns the unsubscribe function. */
  onEvent(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Resolves with the first event named `name` that satisfies `match`.
   * Subscribe before sending the command that causes it.
   * @throws {AenvError} `VMM_TIMEOUT`; `VMM_QMP_ERROR` when the connection closes first.
   */
  waitForEvent(
    name: string,
    match: (e: QmpEvent) => boolean,
    timeoutMs: number,
  ): Promise<QmpEvent> {
    return new Promise<QmpEvent>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#listeners.delete(listener);
        this.#closeListeners.delete(onClose);
      };
      const listener: EventListener = (e) => {
        if (e.event !== name || !match(e)) return;
        done();
        resolve(e);
      };
      const onClose = (): void => {
        done();
        reject(qmpError(`wait for ${name}`, `QMP ${this.#closedReason ?? 'closed'}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new AenvError('VMM_TIMEOUT', `no QMP ${name} event within ${timeoutMs} ms`, {
            fields: { event: name },
          }),
        );
      }, timeoutMs);
      this.#listeners.add(listener);
      this.#closeListeners.add(onClose);
      if (this.#closedReason !== undefined) onClose();
    });
  }

  /** Whether the connection is closed. */
  get closed(): boolean {
    return this.#closedReason !== undefined;
  }

  /** Closes the connection; pending commands reject. Idempotent. */
  close(): void {
    this.#socket.destroy();
    this.#onClose('connection closed by client');
  }

  #onData(chunk: Buffer): void {
    let messages;
    try {
      messages = this.#reader.push(chunk);
    } catch (err) {
      this.#socket.destroy();
      this.#onClose(`protocol error: ${(err as Error).message}`);
      return;
    }
    for (const m of messages) {
      if (m.kind === 'greeting') this.#greeting?.resolve();
      else if (m.kind === 'event') for (const l of [...this.#listeners]) l(m);
      else this.#onReply(m);
    }
  }

  #onReply(reply: QmpReply): void {
    const id = typeof reply.id === 'number' ? reply.id : -1;
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (reply.ok) pending.resolve(reply.value);
    else
      pending.reject(
        qmpError(pending.command, `${reply.errorClass}: ${reply.errorDesc}`, reply.errorClass),
      );
  }

  #onClose(reason: string): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    this.#greeting?.reject(new Error(reason));
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.reject(qmpError(p.command, `QMP ${reason}`));
    }
    for (const l of [...this.#closeListeners]) l();
  }
}

function qmpError(command: string, detail: string, errorClass?: string): AenvError {
  return new AenvError('VMM_QMP_ERROR', `QMP ${command} failed: ${detail}`, {
    fields: { command, class: errorClass },
  });
}

function tryConnect(path: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(undefined);
    });
  });
}
