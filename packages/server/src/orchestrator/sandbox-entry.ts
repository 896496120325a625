/**
 * The orchestrator's live state for one sandbox: its record, its operation
 * queue, its machine while it runs, its TTL timer, and the abort controller
 * of a start in progress.
 *
 * @module
 */
import type { LaunchedSandbox } from './launcher.js';
import { OperationQueue } from './operation-queue.js';
import type { SandboxRecord } from './sandbox.js';

/** One sandbox, live. */
export class SandboxEntry {
  readonly record: SandboxRecord;
  readonly queue = new OperationQueue();
  machine: LaunchedSandbox | undefined;
  ttl: NodeJS.Timeout | undefined;
  /** Aborts the machine start in progress (create or resume). */
  starting: AbortController | undefined;
  /** Set once a kill has been asked for: later operations refuse to start. */
  killRequested = false;

  constructor(record: SandboxRecord) {
    this.record = record;
  }

  get id(): string {
    return this.record.id;
  }

  /**
   * (Re)arms the TTL timer of a running or failed sandbox (a failed one is
   * removed at its end); `onExpire` runs at `record.endAt`.
   */
  armTtl(onExpire: () => void): void {
    clearTimeout(this.ttl);
    if (this.record.state !== 'running' && this.record.state !== 'failed') return;
    const delay = Math.max(0, this.record.endAt.getTime() - Date.now());
    // setTimeout's limit is 2^31-1 ms; longer TTLs re-arm when the timer fires.
    this.ttl = setTimeout(onExpire, Math.min(delay, 2 ** 31 - 1));
    this.ttl.unref();
  }
}
