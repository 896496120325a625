/**
 * A small Prometheus registry: counters, gauges (set or computed at scrape
 * time) and histograms with labels, rendered in the text exposition format
 * (version 0.0.4) for `GET /metrics`. No dependency; only what the node
 * needs.
 *
 * @module
 */

/** Label values by label name. */
export type Labels = Readonly<Record<string, string>>;

/** Default latency buckets in seconds: 5 ms .. 60 s. */
export const LATENCY_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabel(labels[k] ?? '')}"`)
    .join(',');
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function braces(key: string): string {
  return key === '' ? '' : `{${key}}`;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  render(): string[];
}

/** A monotonically increasing count. */
export class Counter implements Metric {
  readonly type = 'counter';
  readonly #values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const k = labelKey(labels);
    this.#values.set(k, (this.#values.get(k) ?? 0) + by);
  }

  render(): string[] {
    return [...this.#values].map(([k, v]) => `${this.name}${braces(k)} ${formatNumber(v)}`);
  }
}

/** A value that goes up and down; `collect` (if given) sets it at scrape time. */
export class Gauge implements Metric {
  readonly type = 'gauge';
  readonly #values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly collect?: (set: (labels: Labels, value: number) => void) => void,
  ) {}

  set(labels: Labels, value: number): void {
    this.#values.set(labelKey(labels), value);
  }

  render(): string[] {
    if (this.collect !== undefined) {
      this.#values.clear();
      this.collect((labels, value) => this.set(labels, value));
    }
    return [...this.#values].map(([k, v]) => `${this.name}${braces(k)} ${formatNumber(v)}`);
  }
}

interface Series {
  readonly counts: number[];
  sum: number;
  count: number;
}

/** A distribution of observations in cumulative buckets. */
export class Histogram implements Metric {
  readonly type = 'histogram';
  readonly #series = new Map<string, Series>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = LATENCY_BUCKETS,
  ) {}

  observe(labels: Labels, value: number): void {
    const k = labelKey(labels);
    let s = this.#series.get(k);
    if (s === undefined) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= (this.buckets[i] as number)) s.counts[i] = (s.counts[i] as number) + 1;
    }
    s.sum += value;
    s.count += 1;
  }

  render(): string[] {
    const out: string[] = [];
    for (const [k, s] of this.#series) {
      const sep = k === '' ? '' : ',';
      this.buckets.forEach((b, i) => {
        out.push(`${this.name}_bucket{${k}${sep}le="${formatNumber(b)}"} ${s.counts[i] ?? 0}`);
      });
      out.push(`${this.name}_bucket{${k}${sep}le="+Inf"} ${s.count}`);
      out.push(`${this.name}_sum${braces(k)} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${braces(k)} ${s.count}`);
    }
    return out;
  }
}

/** Holds metrics and renders them. */
export class MetricsRegistry {
  readonly #metrics: Metric[] = [];

  counter(name: string, help: string): Counter {
    return this.#add(new Counter(name, help));
  }

  gauge(name: string, help: string, collect?: Gauge['collect']): Gauge {
    return this.#add(new Gauge(name, help, collect));
  }

  histogram(name: string, help: string, buckets?: readonly number[]): Histogram {
    return this.#add(new Histogram(name, help, buckets));
  }

  /** The text exposition of every metric. */
  render(): string {
    const lines: string[] = [];
    for (const m of this.#metrics) {
      lines.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${m.type}`, ...m.render());
    }
    return `${lines.join('\n')}\n`;
  }

  #add<M extends Metric>(metric: M): M {
    if (this.#metrics.some((m) => m.name === metric.name)) {
      throw new Error(`metric ${metric.name} registered twice`);
    }
    this.#metrics.push(metric);
    return metric;
  }
}
