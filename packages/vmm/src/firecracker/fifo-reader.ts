/**
 * A named pipe the VMM writes lines into (Firecracker's logger and
 * metrics), read by this process.
 *
 * The FIFO is opened read-write and non-blocking: the open never waits for
 * a writer, and holding a write end ourselves means the reader never sees
 * end-of-file while the VMM has not opened (or has closed) its end.
 * Firecracker opens its log and metrics paths non-blocking, so a slow
 * reader makes it drop lines, never stall the guest.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { constants, openSync } from 'node:fs';
import { chown, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { promisify } from 'node:util';
import { StringDecoder } from 'node:string_decoder';

const run = promisify(execFile);

/** Longest line kept; longer ones are cut (a metrics line is a few KiB). */
const MAX_LINE = 1 << 20;

/** See the module comment. */
export class FifoReader {
  readonly path: string;
  readonly #socket: Socket;
  readonly #decoder = new StringDecoder('utf8');
  #partial = '';
  #closed = false;

  private constructor(path: string, fd: number, onLine: (line: string) => void) {
    this.path = path;
    this.#socket = new Socket({ fd, readable: true, writable: false });
    this.#socket.on('data', (chunk: Buffer) => {
      const lines = (this.#partial + this.#decoder.write(chunk)).split('\n');
      this.#partial = (lines.pop() ?? '').slice(-MAX_LINE);
      for (const line of lines) if (line !== '') onLine(line);
    });
    this.#socket.on('error', () => undefined);
  }

  /**
   * Creates the FIFO at `path` (replacing what is there) and starts reading.
   * @param owner gives the FIFO to the (jailed) VMM's user
   */
  static async create(
    path: string,
    onLine: (line: string) => void,
    owner?: { readonly uid: number; readonly gid: number },
  ): Promise<FifoReader> {
    await rm(path, { force: true });
    await run('mkfifo', ['-m', '0600', path]);
    if (owner !== undefined) await chown(path, owner.uid, owner.gid);
    const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    return new FifoReader(path, fd, onLine);
  }

  /** Stops reading and removes the FIFO; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.destroy();
    await rm(this.path, { force: true });
  }
}
