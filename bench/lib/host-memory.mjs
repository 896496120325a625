/**
 * Host memory figures: a process's Rss and Pss (`/proc/<pid>/smaps_rollup`;
 * Pss divides each shared page among the processes that map it, so clones
 * of one snapshot are charged their share of its pages) and the host's
 * `MemAvailable`, which the density benchmark keeps above a safety margin.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';

/**
 * Rss and Pss of `pid` in bytes.
 * @param {number} pid
 * @returns {Promise<{ rss: number, pss: number }>}
 */
export async function processMemory(pid) {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { rss: kb('Rss'), pss: kb('Pss') };
}

/** `MemAvailable` of the host in bytes. */
export async function memAvailable() {
  const text = await readFile('/proc/meminfo', 'utf8');
  return Number(/^MemAvailable:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) * 1024;
}

/** Bytes as MiB. */
export const toMiB = (bytes) => bytes / 2 ** 20;
