/**
 * Samples each running sandbox's resource use from its envd (`/metrics`)
 * at a fixed interval and keeps the last hour per sandbox, for E2B's
 * `GET /sandboxes/{id}/metrics` (samples in the `SandboxMetric` shape).
 * A sample is also taken on demand when a sandbox has none yet.
 *
 * @module
 */
import { ENVD_PORT, envdMetrics } from '../orchestrator/envd-client.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';

/** One sample, as the e2b SDKs read it (bytes; percent 0-100). */
export interface SandboxMetric {
  readonly timestamp: string;
  readonly timestampUnix: number;
  readonly cpuCount: number;
  readonly cpuUsedPct: number;
  readonly memUsed: number;
  readonly memTotal: number;
  readonly memCache: number;
  readonly diskUsed: number;
  readonly diskTotal: number;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Turns envd's `/metrics` JSON into a sample. */
export function toSandboxMetric(
  raw: Readonly<Record<string, unknown>>,
  now = Date.now(),
): SandboxMetric {
  const unix = num(raw.ts) > 0 ? Math.floor(num(raw.ts)) : Math.floor(now / 1000);
  return {
    timestamp: new Date(unix * 1000).toISOString(),
    timestampUnix: unix,
    cpuCount: num(raw.cpu_count),
    cpuUsedPct: num(raw.cpu_used_pct),
    memUsed: num(raw.mem_used),
    memTotal: num(raw.mem_total),
    memCache: num(raw.mem_cache),
    diskUsed: num(raw.disk_used),
    diskTotal: num(raw.disk_total),
  };
}

/** Periodic sampler of running sandboxes. */
export class SandboxMetricsSampler {
  readonly #orchestrator: Orchestrator;
  readonly #intervalMs: number;
  readonly #keep: number;
  readonly #samples = new Map<string, SandboxMetric[]>();
  #timer: NodeJS.Timeout | undefined;

  /** `intervalMs` 0 disables periodic sampling (on demand only). */
  constructor(orchestrator: Orchestrator, intervalMs: number, keepMs = 3_600_000) {
    this.#orchestrator = orchestrator;
    this.#intervalMs = intervalMs;
    this.#keep = intervalMs > 0 ? Math.ceil(keepMs / intervalMs) : 60;
  }

  /** Starts periodic sampling. */
  start(): void {
    if (this.#intervalMs <= 0 || this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.#sampleAll(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops sampling. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Samples of a visible sandbox between `start` and `end` (unix seconds,
   * inclusive). A running sandbox without samples is sampled now.
   * @throws {AenvError} `SBX_NOT_FOUND`.
   */
  async samples(id: string, start?: number, end?: number): Promise<SandboxMetric[]> {
    const record = this.#orchestrator.get(id);
    if ((this.#samples.get(id)?.length ?? 0) === 0 && record.state === 'running') {
      await this.#sample(id).catch(() => undefined);
    }
    return (this.#samples.get(id) ?? []).filter(
      (s) =>
        (start === undefined || s.timestampUnix >= start) &&
        (end === undefined || s.timestampUnix <= end),
    );
  }

  async #sampleAll(): Promise<void> {
    const running = new Set(this.#orchestrator.list({ states: ['running'] }).map((r) => r.id));
    for (const id of this.#samples.keys()) {
      if (!running.has(id) && this.#orchestrator.list().every((r) => r.id !== id)) {
        this.#samples.delete(id);
      }
    }
    await Promise.all([...running].map((id) => this.#sample(id).catch(() => undefined)));
  }

  async #sample(id: string): Promise<void> {
    const addr = this.#orchestrator.address(id, ENVD_PORT);
    if (addr === undefined) return;
    const raw = await envdMetrics(addr, this.#orchestrator.get(id).envdAccessToken);
    const list = this.#samples.get(id) ?? [];
    list.push(toSandboxMetric(raw));
    if (list.length > this.#keep) list.splice(0, list.length - this.#keep);
    this.#samples.set(id, list);
  }
}
