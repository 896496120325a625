/**
 * Firecracker's own log and metrics, read from the FIFOs it writes: the
 * log goes to a bounded file beside the serial log (`firecracker.log`, with
 * an in-memory tail for error messages); each metrics line is one JSON
 * object (Firecracker flushes every 60 s and on `FlushMetrics`), of which
 * the latest is kept.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import { BoundedLog } from '../bounded-log.js';
import { FifoReader } from './fifo-reader.js';
import type { VmmLayout } from './vmm-layout.js';

/** One metrics flush, as Firecracker writes it (groups of counters by component). */
export type FirecrackerMetrics = Readonly<Record<string, unknown>>;

/** Bound of the VMM log file. */
const LOG_MAX_BYTES = 1024 * 1024;

/** See the module comment. */
export class VmmTelemetry {
  readonly #log: BoundedLog;
  readonly #readers: FifoReader[];
  #latest: FirecrackerMetrics | undefined;
  readonly #waiters = new Set<(m: FirecrackerMetrics) => void>();

  private constructor(log: BoundedLog) {
    this.#log = log;
    this.#readers = [];
  }

  /**
   * Creates both FIFOs of `layout` and starts reading them.
   * @param logFile where the VMM log is kept (bounded)
   * @param owner the jailed VMM's user, who must be able to open the FIFOs
   */
  static async open(
    layout: VmmLayout,
    logFile: string,
    owner?: { readonly uid: number; readonly gid: number },
  ): Promise<VmmTelemetry> {
    const t = new VmmTelemetry(new BoundedLog(logFile, { maxBytes: LOG_MAX_BYTES }));
    try {
      t.#readers.push(
        await FifoReader.create(layout.logFifo.host, (l) => t.#onLog(l), owner),
        await FifoReader.create(layout.metricsFifo.host, (l) => t.#onMetrics(l), owner),
      );
      return t;
    } catch (err) {
      await t.close();
      throw err;
    }
  }

  /** The most recent VMM log lines. */
  logTail(): string {
    return this.#log.tail();
  }

  /** The last metrics flush seen, if any. */
  get latest(): FirecrackerMetrics | undefined {
    return this.#latest;
  }

  /**
   * Resolves with the next metrics flush.
   * @throws {AenvError} `VMM_TIMEOUT`.
   */
  nextMetrics(timeoutMs: number): Promise<FirecrackerMetrics> {
    return new Promise((resolve, reject) => {
      const done = (m: FirecrackerMetrics): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve(m);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(done);
        reject(new AenvError('VMM_TIMEOUT', `no metrics from the VMM within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.add(done);
    });
  }

  /** Stops reading, removes the FIFOs and closes the log; idempotent. */
  async close(): Promise<void> {
    await Promise.all(this.#readers.map((r) => r.close()));
    this.#log.close();
  }

  #onLog(line: string): void {
    this.#log.write(Buffer.from(`${line}\n`));
  }

  #onMetrics(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return; // a cut or foreign line: keep the previous flush
    }
    if (typeof parsed !== 'object' || parsed === null) return;
    this.#latest = parsed as FirecrackerMetrics;
    for (const w of [...this.#waiters]) w(this.#latest);
  }
}
