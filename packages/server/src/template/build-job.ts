/**
 * One template build as the API sees it: E2B's status (`waiting`,
 * `building`, `ready`, `error`), its log entries (read with an offset, as
 * the e2b SDK polls them), the failure reason naming the step, and a way to
 * cancel it. Jobs live in memory: a build does not survive a node restart
 * (nothing of it was recorded), and finished jobs are forgotten after a while.
 *
 * @module
 */
import type { AenvError } from '@aenv/shared';
import type { BuildLogLevel } from './step-runner.js';

/** E2B's `BuildLogEntry`. */
export interface BuildLogEntry {
  readonly timestamp: string;
  readonly level: BuildLogLevel;
  readonly message: string;
  readonly step?: string | undefined;
}

/** E2B's `TemplateBuildStatus`. */
export type BuildStatus = 'waiting' | 'building' | 'ready' | 'error';

/** Why a build failed. */
export interface BuildFailure {
  readonly message: string;
  readonly step: string | undefined;
  readonly code: string;
}

const MAX_ENTRIES = 20_000;

/** A build in progress or recently finished. */
export class BuildJob {
  readonly templateId: string;
  readonly buildId: string;
  readonly alias: string | undefined;
  readonly vcpus: number | undefined;
  readonly memoryMiB: number | undefined;
  readonly createdAt = new Date();
  readonly abort = new AbortController();
  status: BuildStatus = 'waiting';
  /** Set when the build was asked to start (it may still wait for a turn). */
  started = false;
  failure: BuildFailure | undefined;
  finishedAt: Date | undefined;
  readonly #entries: BuildLogEntry[] = [];
  #dropped = 0;
  readonly #listeners = new Set<(e: BuildLogEntry) => void>();

  constructor(o: {
    templateId: string;
    buildId: string;
    alias: string | undefined;
    vcpus: number | undefined;
    memoryMiB: number | undefined;
  }) {
    this.templateId = o.templateId;
    this.buildId = o.buildId;
    this.alias = o.alias;
    this.vcpus = o.vcpus;
    this.memoryMiB = o.memoryMiB;
  }

  /** Appends a log entry (the oldest are dropped past 20 000). */
  log(level: BuildLogLevel, message: string, step?: string): void {
    const entry: BuildLogEntry = { timestamp: new Date().toISOString(), level, message, step };
    this.#entries.push(entry);
    if (this.#entries.length > MAX_ENTRIES) {
      this.#entries.shift();
      this.#dropped++;
    }
    for (const l of this.#listeners) l(entry);
  }

  /** Entries from `offset` (counted from the first entry ever logged). */
  entries(offset = 0): BuildLogEntry[] {
    return this.#entries.slice(Math.max(0, offset - this.#dropped));
  }

  /** Follows new entries; returns the unsubscribe. */
  follow(listener: (e: BuildLogEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Marks the build finished. */
  finish(err: AenvError | undefined): void {
    this.finishedAt = new Date();
    if (err === undefined) {
      this.status = 'ready';
      this.log('info', 'build finished', 'finalize');
      return;
    }
    const step = err.fields.step;
    this.failure = {
      message: err.message,
      step: step === undefined || step === null ? undefined : String(step),
      code: err.code,
    };
    this.status = 'error';
    this.log('error', `build failed: ${err.message}`, this.failure.step);
  }
}
