/**
 * The VM's serial console: a client of QEMU's serial chardev socket that
 * copies everything into a {@link BoundedLog} and lets callers wait for a
 * pattern (a boot marker) in the output.
 *
 * QEMU's own `logfile=` would grow without bound, hence the client. The
 * socket is a server with `wait=off`: output is dropped while no client is
 * connected, so the driver attaches before the guest runs (boot starts
 * QEMU with `-S`; a restore is paused until migrated).
 *
 * @module
 */
import { createConnection, type Socket } from 'node:net';
import { AenvError } from '@aenv/shared';
import { BoundedLog } from '../bounded-log.js';
import type { ConsoleWaitOptions } from '../driver.js';

interface Waiter {
  readonly pattern: RegExp;
  readonly resolve: (text: string) => void;
  readonly reject: (err: Error) => void;
}

/** See the module comment. */
export class SerialConsole {
  readonly #log: BoundedLog;
  readonly #socket: Socket;
  readonly #waiters = new Set<Waiter>();
  #failure: AenvError | undefined;

  private constructor(socket: Socket, log: BoundedLog) {
    this.#socket = socket;
    this.#log = log;
    socket.on('data', (chunk: Buffer) => {
      log.write(chunk);
      this.#check();
    });
    socket.on('error', () => undefined);
  }

  /** Connects to QEMU's serial socket and starts logging to `logPath`. */
  static async attach(
    socketPath: string,
    logPath: string,
    maxBytes?: number,
  ): Promise<SerialConsole> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = createConnection(socketPath);
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    }).catch((err: unknown) => {
      throw new AenvError('VMM_START_FAILED', `cannot attach serial console ${socketPath}`, {
        cause: err,
      });
    });
    const log = new BoundedLog(logPath, maxBytes === undefined ? {} : { maxBytes });
    return new SerialConsole(socket, log);
  }

  /** Recent console output. */
  tail(): string {
    return this.#log.tail();
  }

  /** See `Vm.waitForConsole`. */
  waitFor(pattern: RegExp, options: ConsoleWaitOptions = {}): Promise<string> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    // a stateful (g/y) regex would make repeated tests skip matches
    pattern = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    const text = this.#log.tail();
    if (pattern.test(text)) return Promise.resolve(text);
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise<string>((resolve, reject) => {
      const onAbort = (): void => finish(() => reject(options.signal?.reason as Error));
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(waiter);
        settle();
      };
      const waiter: Waiter = {
        pattern,
        resolve: (t) => finish(() => resolve(t)),
        reject: (e) => finish(() => reject(e)),
      };
      const timer = setTimeout(() => {
        waiter.reject(
          new AenvError(
            'VMM_TIMEOUT',
            `console did not show ${String(pattern)} within ${timeoutMs} ms`,
            {
              fields: { pattern: String(pattern) },
            },
          ),
        );
      }, timeoutMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  /** Rejects current and future waits (the VM ended). */
  fail(err: AenvError): void {
    this.#failure ??= err;
    for (const w of [...this.#waiters]) w.reject(err);
  }

  /** Disconnects and closes the log; idempotent. */
  detach(): void {
    this.#socket.destroy();
    this.#log.close();
  }

  #check(): void {
    if (this.#waiters.size === 0) return;
    const text = this.#log.tail();
    for (const w of [...this.#waiters]) if (w.pattern.test(text)) w.resolve(text);
  }
}
