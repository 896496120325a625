/**
 * The node's Prometheus metrics: per-stage latency histograms of sandbox
 * operations (create, pause, resume, snapshot, fork, kill), operation
 * counts by result, sandboxes by state and network slot pool levels.
 * Rendered by `GET /metrics`.
 *
 * @module
 */
import {
  LATENCY_BUCKETS,
  MetricsRegistry,
  type Counter,
  type Histogram,
} from './metrics-registry.js';

/** Sandbox operations that are measured. */
export type MeasuredOp =
  | 'create'
  | 'pause'
  | 'resume'
  | 'snapshot'
  | 'fork'
  | 'kill'
  | 'template'
  /** A VMM that ended unasked (its sandbox became `failed`). */
  | 'machine-exit';

/** Live values read at scrape time. */
export interface NodeGauges {
  /** Sandboxes by lifecycle state. */
  readonly sandboxesByState: () => Readonly<Record<string, number>>;
  /** Network slot pool levels (ready, building, in use, capacity). */
  readonly slots?: () => Readonly<Record<string, number>>;
}

/** The metrics of one node. */
export class NodeMetrics {
  readonly registry = new MetricsRegistry();
  readonly #seconds: Histogram;
  readonly #total: Counter;

  constructor(gauges: NodeGauges) {
    this.#seconds = this.registry.histogram(
      'aenv_sandbox_operation_seconds',
      'Latency of sandbox operations by stage (stage="total" is the whole operation).',
      LATENCY_BUCKETS,
    );
    this.#total = this.registry.counter(
      'aenv_sandbox_operations_total',
      'Sandbox operations by result (ok or the error code).',
    );
    this.registry.gauge('aenv_sandboxes', 'Sandboxes on this node by state.', (set) => {
      for (const [state, n] of Object.entries(gauges.sandboxesByState())) set({ state }, n);
    });
    const slots = gauges.slots;
    if (slots !== undefined) {
      this.registry.gauge('aenv_network_slots', 'Network slots by state.', (set) => {
        for (const [state, n] of Object.entries(slots())) set({ state }, n);
      });
    }
  }

  /** Records one operation: its result and, when it succeeded, its stage timings (ms). */
  record(op: MeasuredOp, result: string, timingsMs: Readonly<Record<string, number>> = {}): void {
    this.#total.inc({ op, result });
    for (const [stage, ms] of Object.entries(timingsMs)) {
      this.#seconds.observe({ op, stage }, ms / 1000);
    }
  }

  /** The Prometheus text exposition. */
  render(): string {
    return this.registry.render();
  }
}
