/**
 * `GET /metrics`: a point-in-time resource snapshot for the control plane,
 * with E2B's field names: CPU count and usage since the previous call,
 * memory (bytes and MiB) and the disk of envd's root.
 *
 * @module
 */
import { readFile, statfs } from 'node:fs/promises';
import { cpus } from 'node:os';

/** One metrics answer. */
export interface EnvdMetrics {
  readonly ts: number;
  readonly cpu_count: number;
  readonly cpu_used_pct: number;
  readonly mem_total: number;
  readonly mem_used: number;
  readonly mem_cache: number;
  readonly mem_total_mib: number;
  readonly mem_used_mib: number;
  readonly disk_used: number;
  readonly disk_total: number;
}

interface CpuSample {
  readonly busy: number;
  readonly total: number;
}

function sampleCpu(): CpuSample {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    const all = times.user + times.nice + times.sys + times.idle + times.irq;
    total += all;
    busy += all - times.idle;
  }
  return { busy, total };
}

async function meminfo(): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  const text = await readFile('/proc/meminfo', 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const m = /^(\w+):\s+(\d+)\s*kB/.exec(line);
    if (m !== null) values.set(m[1] ?? '', Number(m[2]) * 1024);
  }
  return values;
}

/** Keeps the previous CPU sample so usage covers the time between calls. */
export class MetricsSampler {
  #last: CpuSample | undefined;
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  async #cpuPercent(): Promise<number> {
    if (this.#last === undefined) {
      this.#last = sampleCpu();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const now = sampleCpu();
    const prev = this.#last;
    this.#last = now;
    const total = now.total - prev.total;
    return total > 0 ? Math.round(((now.busy - prev.busy) / total) * 10000) / 100 : 0;
  }

  /** A snapshot now. */
  async sample(): Promise<EnvdMetrics> {
    const [cpuPct, mem, disk] = await Promise.all([
      this.#cpuPercent(),
      meminfo(),
      statfs(this.#root).catch(() => undefined),
    ]);
    const memTotal = mem.get('MemTotal') ?? 0;
    const memUsed = memTotal - (mem.get('MemAvailable') ?? mem.get('MemFree') ?? 0);
    const blockSize = disk?.bsize ?? 0;
    return {
      ts: Math.floor(Date.now() / 1000),
      cpu_count: cpus().length,
      cpu_used_pct: cpuPct,
      mem_total: memTotal,
      mem_used: memUsed,
      mem_cache: (mem.get('Cached') ?? 0) + (mem.get('Buffers') ?? 0),
      mem_total_mib: Math.floor(memTotal / 1048576),
      mem_used_mib: Math.floor(memUsed / 1048576),
      disk_used: disk === undefined ? 0 : (disk.blocks - disk.bfree) * blockSize,
      disk_total: disk === undefined ? 0 : disk.blocks * blockSize,
    };
  }
}
