/**
 * `NbdConnection`: one client socket, from greeting to disconnect.
 *
 * Requests are parsed in order but served concurrently and answered as
 * they finish (NBD allows replies out of order; the cookie pairs them).
 * Ordering between overlapping writes is the device's job (`RangeLock`).
 * Back-pressure: while more than {@link MAX_INFLIGHT} requests or
 * {@link MAX_INFLIGHT_BYTES} of payload are being served, the socket is
 * paused. A request that fails is answered with an errno, never by
 * dropping the connection; only a protocol violation closes it.
 *
 * @module
 */
import type { Socket } from 'node:net';
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import { publish, STORAGE_CHANNELS } from '../events.js';
import { ByteQueue } from './byte-queue.js';
import type { NbdExport } from './nbd-export.js';
import { answerOption, type ExportLookup } from './nbd-handshake.js';
import {
  ClientFlag,
  Cmd,
  CmdFlag,
  Errno,
  HandshakeFlag,
  IHAVEOPT,
  MAX_OPTION_LENGTH,
  MAX_PAYLOAD,
  NBD_MAGIC,
  REQUEST_MAGIC,
  REQUEST_SIZE,
  SIMPLE_REPLY_MAGIC,
} from './protocol.js';

/** Most requests served at once per connection. */
export const MAX_INFLIGHT = 64;
/** Most payload bytes in flight per connection. */
export const MAX_INFLIGHT_BYTES = 64 << 20;

interface Request {
  readonly flags: number;
  readonly type: number;
  readonly cookie: Buffer;
  readonly offset: number;
  readonly length: number;
  readonly data?: Buffer;
}

/** One NBD client connection. */
export class NbdConnection {
  readonly #socket: Socket;
  readonly #lookup: ExportLookup;
  readonly #names: () => string[];
  readonly #queue = new ByteQueue();
  #phase: 'flags' | 'options' | 'transmission' | 'done' = 'flags';
  #export: NbdExport | undefined;
  #noZeroes = false;
  #inflight = 0;
  #inflightBytes = 0;
  #idle: (() => void) | undefined;
  #corked = false;
  readonly #closed: Promise<void>;

  constructor(socket: Socket, lookup: ExportLookup, names: () => string[]) {
    this.#socket = socket;
    this.#lookup = lookup;
    this.#names = names;
    this.#closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => this.#onClose());
    const hello = Buffer.alloc(18);
    hello.writeBigUInt64BE(NBD_MAGIC, 0);
    hello.writeBigUInt64BE(IHAVEOPT, 8);
    hello.writeUInt16BE(HandshakeFlag.fixedNewstyle | HandshakeFlag.noZeroes, 16);
    socket.write(hello);
  }

  /** The export in use, once transmission started. */
  get export(): NbdExport | undefined {
    return this.#export;
  }

  /** Stops reading, lets requests in flight finish, then closes. */
  async shutdown(): Promise<void> {
    this.#phase = 'done';
    this.#socket.pause();
    await this.#drained();
    this.#socket.destroy();
    await this.#closed;
  }

  #onData(chunk: Buffer): void {
    this.#queue.push(chunk);
    try {
      while (this.#step()) {
        /* keep parsing */
      }
    } catch (err) {
      this.#violation(err instanceof Error ? err.message : String(err));
    }
  }

  /** Parses one message if enough bytes are there; returns whether it did. */
  #step(): boolean {
    switch (this.#phase) {
      case 'flags':
        return this.#clientFlags();
      case 'options':
        return this.#option();
      case 'transmission':
        return this.#request();
      case 'done':
        return false;
    }
  }

  #clientFlags(): boolean {
    if (this.#queue.length < 4) return false;
    const flags = this.#queue.take(4).readUInt32BE(0);
    if ((flags & ~(ClientFlag.fixedNewstyle | ClientFlag.noZeroes)) !== 0) {
      throw new Error(`unknown client flags ${flags}`);
    }
    this.#noZeroes = (flags & ClientFlag.noZeroes) !== 0;
    this.#phase = 'options';
    return true;
  }

  #option(): boolean {
    if (this.#queue.length < 16) return false;
    const head = this.#queue.peek(16);
    if (head.readBigUInt64BE(0) !== IHAVEOPT) throw new Error('bad option magic');
    const option = head.readUInt32BE(8);
    const length = head.readUInt32BE(12);
    if (length > MAX_OPTION_LENGTH) throw new Error(`option of ${length} bytes`);
    if (this.#queue.length < 16 + length) return false;
    this.#queue.skip(16);
    const data = Buffer.from(this.#queue.take(length));
    const outcome = answerOption(option, data, this.#lookup, this.#names, this.#noZeroes);
    for (const r of outcome.replies) this.#socket.write(r);
    if (outcome.close === true) {
      this.#phase = 'done';
      this.#socket.end();
      return false;
    }
    if (outcome.start !== undefined) this.#begin(outcome.start);
    return true;
  }

  #begin(exp: NbdExport): void {
    this.#export = exp;
    this.#phase = 'transmission';
    exp.counters.connections += 1;
    exp.counters.connectionsTotal += 1;
    publish(STORAGE_CHANNELS.nbdConnect, { [LOG_FIELDS.driveId]: exp.name });
  }

  #request(): boolean {
    if (this.#queue.length < REQUEST_SIZE) return false;
    const h = this.#queue.peek(REQUEST_SIZE);
    if (h.readUInt32BE(0) !== REQUEST_MAGIC) throw new Error('bad request magic');
    const type = h.readUInt16BE(6);
    const length = h.readUInt32BE(24);
    if (type === Cmd.write) {
      if (length > MAX_PAYLOAD) throw new Error(`write of ${length} bytes`);
      if (this.#queue.length < REQUEST_SIZE + length) return false;
    }
    const req: Request = {
      flags: h.readUInt16BE(4),
      type,
      cookie: Buffer.from(h.subarray(8, 16)),
      offset: Number(h.readBigUInt64BE(16)),
      length,
    };
    this.#queue.skip(REQUEST_SIZE);
    const full = type === Cmd.write ? { ...req, data: this.#queue.take(length) } : req;
    if (type === Cmd.disc) {
      void this.shutdown();
      return false;
    }
    this.#dispatch(full);
    return true;
  }

  #dispatch(req: Request): void {
    const bytes = req.type === Cmd.read || req.type === Cmd.write ? req.length : 0;
    this.#inflight += 1;
    this.#inflightBytes += bytes;
    if (this.#inflight >= MAX_INFLIGHT || this.#inflightBytes >= MAX_INFLIGHT_BYTES)
      this.#socket.pause();
    this.#serve(req)
      .then(
        (data) => this.#reply(req.cookie, 0, data),
        (err: unknown) => this.#reply(req.cookie, this.#fail(req, err)),
      )
      .finally(() => {
        this.#inflight -= 1;
        this.#inflightBytes -= bytes;
        if (this.#phase === 'transmission' && this.#inflight < MAX_INFLIGHT / 2)
          this.#socket.resume();
        if (this.#inflight === 0) this.#idle?.();
      });
  }

  /** Serves one request; resolves with the READ payload (header room included) if any. */
  async #serve(req: Request): Promise<Buffer | undefined> {
    const exp = this.#export as NbdExport;
    const p = exp.provider;
    const c = exp.counters;
    const fua = { fua: (req.flags & CmdFlag.fua) !== 0 };
    if (req.offset + req.length > p.size || !Number.isSafeInteger(req.offset))
      throw errno(Errno.EINVAL);
    if (p.readOnly && req.type !== Cmd.read && req.type !== Cmd.flush && req.type !== Cmd.cache) {
      throw errno(Errno.EPERM);
    }
    switch (req.type) {
      case Cmd.read: {
        if (req.length > MAX_PAYLOAD) throw errno(Errno.EINVAL);
        const out = Buffer.allocUnsafe(16 + req.length);
        await p.readAt(out.subarray(16), req.offset);
        c.reads += 1;
        c.bytesRead += req.length;
        return out;
      }
      case Cmd.write:
        await p.writeAt(req.data as Buffer, req.offset, fua);
        c.writes += 1;
        c.bytesWritten += req.length;
        return undefined;
      case Cmd.flush:
        await p.flush();
        c.flushes += 1;
        return undefined;
      case Cmd.trim:
        await p.trimAt(req.offset, req.length, fua);
        c.trims += 1;
        return undefined;
      case Cmd.writeZeroes:
        await p.writeZeroesAt(req.offset, req.length, fua);
        c.zeroes += 1;
        return undefined;
      case Cmd.cache:
        await p.prefetch?.([{ offset: req.offset, length: req.length }]);
        c.caches += 1;
        return undefined;
      default:
        throw errno(Errno.EINVAL);
    }
  }

  #reply(cookie: Buffer, error: number, data?: Buffer): void {
    if (this.#socket.destroyed) return;
    const out = data ?? Buffer.allocUnsafe(16);
    out.writeUInt32BE(SIMPLE_REPLY_MAGIC, 0);
    out.writeUInt32BE(error, 4);
    cookie.copy(out, 8);
    // Replies finished in one turn of the event loop leave in one writev:
    // a socket write per reply costs more than serving a cached 4 KiB read.
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      setImmediate(() => {
        this.#corked = false;
        this.#socket.uncork();
      });
    }
    this.#socket.write(error === 0 ? out : out.subarray(0, 16));
  }

  #fail(req: Request, err: unknown): number {
    const exp = this.#export as NbdExport;
    exp.counters.errors += 1;
    const code = err instanceof AenvError ? err.code : 'INTERNAL';
    const value = err instanceof NbdErrno ? err.errno : errnoFor(code);
    publish(STORAGE_CHANNELS.nbdError, {
      [LOG_FIELDS.driveId]: exp.name,
      [LOG_FIELDS.op]: req.type,
      [LOG_FIELDS.errorCode]: err instanceof NbdErrno ? `errno ${err.errno}` : code,
      [LOG_FIELDS.errorMessage]: err instanceof Error ? err.message : String(err),
    });
    return value;
  }

  #violation(why: string): void {
    publish(STORAGE_CHANNELS.nbdError, {
      [LOG_FIELDS.driveId]: this.#export?.name,
      [LOG_FIELDS.errorCode]: 'protocol',
      [LOG_FIELDS.errorMessage]: why,
    });
    this.#phase = 'done';
    this.#socket.destroy();
  }

  #drained(): Promise<void> {
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise((resolve) => (this.#idle = resolve));
  }

  #onClose(): void {
    this.#phase = 'done';
    const exp = this.#export;
    if (exp === undefined) return;
    exp.counters.connections -= 1;
    publish(STORAGE_CHANNELS.nbdDisconnect, { [LOG_FIELDS.driveId]: exp.name });
  }
}

class NbdErrno extends Error {
  constructor(readonly errno: number) {
    super(`errno ${errno}`);
  }
}

function errno(value: number): NbdErrno {
  return new NbdErrno(value);
}

function errnoFor(code: string): number {
  switch (code) {
    case 'STORAGE_OUT_OF_RANGE':
    case 'INVALID_ARGUMENT':
      return Errno.EINVAL;
    case 'STORAGE_READ_ONLY':
      return Errno.EPERM;
    case 'STORAGE_NO_SPACE':
      return Errno.ENOSPC;
    case 'STORAGE_CLOSED':
      return Errno.ESHUTDOWN;
    default:
      return Errno.EIO;
  }
}
