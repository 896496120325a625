/**
 * Host memory as VM suites report it: the proportional set size (Pss) of
 * processes, where a page shared by n processes counts 1/n in each (so the
 * sum over a set of VMMs is the memory they take together, shared snapshot
 * pages counted once), and the kernel's `MemAvailable`.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';

/** Parses a `kB` field out of `/proc/<pid>/smaps_rollup` or `/proc/meminfo` text. */
export function parseKbField(text: string, field: string): number | undefined {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
  return m === null ? undefined : Number(m[1]) * 1024;
}

/**
 * A process's Pss in bytes.
 * @throws when the process is gone or its smaps are unreadable
 */
export async function processPss(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const pss = parseKbField(text, 'Pss');
  if (pss === undefined) throw new Error(`no Pss in /proc/${pid}/smaps_rollup`);
  return pss;
}

/** The sum of the Pss of `pids`, in bytes. */
export async function totalPss(pids: readonly number[]): Promise<number> {
  const each = await Promise.all(pids.map((p) => processPss(p)));
  return each.reduce((a, b) => a + b, 0);
}

/** `MemAvailable` in bytes. */
export async function memAvailable(): Promise<number> {
  const v = parseKbField(await readFile('/proc/meminfo', 'utf8'), 'MemAvailable');
  if (v === undefined) throw new Error('no MemAvailable in /proc/meminfo');
  return v;
}

/** Bytes as MiB with one decimal. */
export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
