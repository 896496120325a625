/**
 * The guest's serial console as Firecracker emits it: a byte stream (the
 * VMM's stdout) copied into a {@link BoundedLog}, with waits for a pattern
 * (a boot marker) in the output.
 *
 * The qemu driver reads its console from a socket instead; both keep the
 * same contract as `Vm.consoleTail`/`Vm.waitForConsole`.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import { AenvError } from '@aenv/shared';
import { BoundedLog } from '../bounded-log.js';
import type { ConsoleWaitOptions } from '../driver.js';

interface Waiter {
  readonly pattern: RegExp;
  readonly resolve: (text: string) => void;
  readonly reject: (err: Error) => void;
}

/** See the module comment. */
export class StreamConsole {
  readonly #log: BoundedLog;
  readonly #waiters = new Set<Waiter>();
  #failure: AenvError | undefined;

  /** Starts copying `stream` into a bounded log at `logPath`. */
  constructor(stream: Readable, logPath: string, maxBytes?: number) {
    this.#log = new BoundedLog(logPath, maxBytes === undefined ? {} : { maxBytes });
    stream.on('data', (chunk: Buffer) => {
      this.#log.write(chunk);
      this.#check();
    });
    stream.on('error', () => undefined);
  }

  /** Recent console output. */
  tail(): string {
    return this.#log.tail();
  }

  /** See `Vm.waitForConsole`. */
  waitFor(pattern: RegExp, options: ConsoleWaitOptions = {}): Promise<string> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    // a stateful (g/y) regex would make repeated tests skip matches
    const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    const text = this.#log.tail();
    if (re.test(text)) return Promise.resolve(text);
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
        pattern: re,
        resolve: (t) => finish(() => resolve(t)),
        reject: (e) => finish(() => reject(e)),
      };
      const timer = setTimeout(() => {
        const msg = `console did not show ${String(re)} within ${timeoutMs} ms`;
        waiter.reject(new AenvError('VMM_TIMEOUT', msg, { fields: { pattern: String(re) } }));
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

  /** Closes the log; idempotent. */
  close(): void {
    this.#log.close();
  }

  #check(): void {
    if (this.#waiters.size === 0) return;
    const text = this.#log.tail();
    for (const w of [...this.#waiters]) if (w.pattern.test(text)) w.resolve(text);
  }
}
