/**
 * The last hour of a node's (or a cluster's) own metrics, for the
 * dashboard's charts. Every `intervalMs` it reads the Prometheus text of
 * `GET /metrics` (in process on a node; one text per node on a gateway,
 * summed) and turns the difference from the previous read into one
 * {@link HistoryPoint}: creates and resumes per second, their p50 and p99
 * latency (from the `aenv_sandbox_operation_seconds` histogram,
 * `stage="total"`), failed operations, and sandboxes by state.
 *
 * Memory is bounded: one point per interval for `windowMs` (720 points
 * for an hour at 5 s). A failing read is skipped; a source that restarted
 * (counters went down) counts from zero.
 *
 * @module
 */
import { bucketDelta, histogramQuantile, type Bucket } from './histogram-quantile.js';
import type { HistoryPoint } from '../model/ui-types.js';
import { parsePrometheusText, type PromSample } from './prometheus-text.js';

export type { HistoryPoint };

/** Where the metrics text comes from: one text, or one per node (summed). */
export type MetricsSource = () => string | readonly string[] | Promise<string | readonly string[]>;

/** Options of a {@link MetricsHistory}. */
export interface MetricsHistoryOptions {
  readonly source: MetricsSource;
  /** @default 5000 */
  readonly intervalMs?: number;
  /** @default one hour */
  readonly windowMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** What one read of the metrics holds. */
interface Reading {
  readonly at: number;
  readonly buckets: ReadonlyMap<string, Bucket[]>;
  readonly failures: number;
  readonly running: number;
  readonly paused: number;
}

const OP_SECONDS = 'aenv_sandbox_operation_seconds_bucket';
const OPS_TOTAL = 'aenv_sandbox_operations_total';
const SANDBOXES = 'aenv_sandboxes';

function addBucket(perOp: Map<string, Map<number, number>>, s: PromSample): void {
  const op = s.labels.op ?? '';
  const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
  const m = perOp.get(op) ?? new Map<number, number>();
  m.set(le, (m.get(le) ?? 0) + s.value);
  perOp.set(op, m);
}

/** Reads the figures the history needs out of metrics texts. */
export function readMetrics(texts: readonly string[], at: number): Reading {
  const perOp = new Map<string, Map<number, number>>();
  let failures = 0;
  let running = 0;
  let paused = 0;
  for (const s of texts.flatMap(parsePrometheusText)) {
    if (s.name === OP_SECONDS && s.labels.stage === 'total' && s.labels.op !== undefined) {
      addBucket(perOp, s);
    } else if (s.name === OPS_TOTAL && s.labels.result !== 'ok') {
      failures += s.value;
    } else if (s.name === SANDBOXES && s.labels.state === 'paused') {
      paused += s.value;
    } else if (s.name === SANDBOXES && s.labels.state !== 'killed') {
      running += s.value;
    }
  }
  const buckets = new Map<string, Bucket[]>();
  for (const [op, m] of perOp) {
    buckets.set(
      op,
      [...m].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le),
    );
  }
  return { at, buckets, failures, running, paused };
}

function opFigures(now: Reading, before: Reading, op: string, seconds: number) {
  const delta = bucketDelta(now.buckets.get(op) ?? [], before.buckets.get(op));
  const count = delta.at(-1)?.count ?? 0;
  const ms = (q: number): number | null => {
    const v = histogramQuantile(q, delta);
    return v === null ? null : Math.round(v * 1000 * 10) / 10;
  };
  return { perSec: seconds > 0 ? count / seconds : 0, p50: ms(0.5), p99: ms(0.99) };
}

/** The point between two readings. */
export function pointBetween(before: Reading, now: Reading): HistoryPoint {
  const seconds = Math.max(0, (now.at - before.at) / 1000);
  const create = opFigures(now, before, 'create', seconds);
  const resume = opFigures(now, before, 'resume', seconds);
  const failed = now.failures - before.failures;
  return {
    t: now.at,
    intervalS: seconds,
    createsPerSec: create.perSec,
    resumesPerSec: resume.perSec,
    createP50Ms: create.p50,
    createP99Ms: create.p99,
    resumeP50Ms: resume.p50,
    resumeP99Ms: resume.p99,
    failures: failed < 0 ? now.failures : failed,
    running: now.running,
    paused: now.paused,
  };
}

/** A bounded, sampled history of operation metrics. */
export class MetricsHistory {
  readonly intervalMs: number;
  readonly windowMs: number;
  readonly #source: MetricsSource;
  readonly #now: () => number;
  readonly #points: HistoryPoint[] = [];
  readonly #listeners = new Set<(p: HistoryPoint) => void>();
  #last: Reading | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: MetricsHistoryOptions) {
    this.#source = options.source;
    this.intervalMs = options.intervalMs ?? 5000;
    this.windowMs = options.windowMs ?? 3600_000;
    this.#now = options.now ?? Date.now;
  }

  /** Takes a baseline now and a point every interval until {@link stop}. */
  start(): void {
    if (this.#timer !== undefined) return;
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), this.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Points of the window, oldest first. */
  points(): readonly HistoryPoint[] {
    return [...this.#points];
  }

  /** Calls `fn` with each new point; returns the unsubscribe function. */
  subscribe(fn: (p: HistoryPoint) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Reads the source now; returns the new point (none for the first read or a failed one). */
  async sample(): Promise<HistoryPoint | undefined> {
    let texts: readonly string[];
    try {
      const got = await this.#source();
      texts = typeof got === 'string' ? [got] : got;
    } catch {
      return undefined;
    }
    const reading = readMetrics(texts, this.#now());
    const before = this.#last;
    this.#last = reading;
    if (before === undefined) return undefined;
    const point = pointBetween(before, reading);
    this.#points.push(point);
    const oldest = reading.at - this.windowMs;
    while ((this.#points[0]?.t ?? Infinity) < oldest) this.#points.shift();
    for (const fn of this.#listeners) fn(point);
    return point;
  }
}
