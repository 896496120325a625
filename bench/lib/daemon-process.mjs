/**
 * A node daemon in its own process (`aenv server`, the real command line)
 * for the load test: unlike `bench-node.mjs`, which serves the node inside
 * the benchmark's process, the load generator's own memory and sockets
 * must not be counted as the daemon's. The daemon listens on a free
 * loopback port, keeps its state under the given home, and exits when
 * stopped (SIGTERM: it kills its sandboxes first).
 *
 * {@link DaemonProcess} also samples the daemon's Rss, Pss and open file
 * descriptors, and finds QEMU processes a node left behind.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { processMemory } from './host-memory.mjs';

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const CLI = join(root, 'packages/cli/dist/src/main.js');
const READY_TIMEOUT_MS = 600_000;
const STOP_TIMEOUT_MS = 120_000;

/** A running `aenv server` child process. */
export class DaemonProcess {
  /** @type {string[]} the last lines the daemon wrote (for a crash report) */
  tail = [];
  /** @type {{ code: number | null, signal: string | null } | undefined} */
  exited;

  /**
   * @param {import('node:child_process').ChildProcess} child
   * @param {string} home
   */
  constructor(child, home) {
    this.child = child;
    this.pid = child.pid;
    this.home = home;
    this.exit = once(child, 'exit').then(([code, signal]) => {
      this.exited = { code, signal };
    });
  }

  /** Rss, Pss (bytes) and open file descriptors of the daemon. */
  async sample() {
    const mem = await processMemory(this.pid);
    const fds = (await readdir(`/proc/${this.pid}/fd`)).length;
    return { ...mem, fds };
  }

  /** Stops the daemon (SIGTERM, SIGKILL after two minutes); resolves once it exited. */
  async stop() {
    if (this.exited === undefined) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await this.exit;
    clearTimeout(timer);
  }
}

/**
 * Starts `aenv server` with `env` on top of a minimal environment; resolves
 * once it printed its URL: `{ daemon, url, apiKey }`.
 * @param {{ home: string, env: Record<string, string>, config?: object }} o
 */
export async function startDaemon(o) {
  const configFile = join(o.home, 'load-config.json');
  await writeFile(configFile, JSON.stringify(o.config ?? {}));
  const child = spawn(process.execPath, [CLI, 'server', '--config', configFile], {
    env: { ...o.env, AENV_HOME: o.home, AENV_PORT: '0', AENV_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const daemon = new DaemonProcess(child, o.home);
  const keep = (line) => {
    daemon.tail.push(line);
    if (daemon.tail.length > 50) daemon.tail.shift();
  };
  createInterface({ input: child.stderr }).on('line', keep);
  const lines = createInterface({ input: child.stdout });
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('aenv server: not ready in time')),
      READY_TIMEOUT_MS,
    );
    lines.on('line', (line) => {
      keep(line);
      const url = /^aenv node ready at (\S+)/.exec(line)?.[1];
      const keyPath = /API key: (\S+)/.exec(line)?.[1];
      if (url !== undefined) daemon.url = url;
      if (keyPath === undefined) return;
      clearTimeout(timer);
      resolve(keyPath);
    });
    void daemon.exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`aenv server exited at start: ${daemon.tail.slice(-5).join(' | ')}`));
    });
  });
  const keyPath = await ready;
  const apiKey = (await readFile(keyPath, 'utf8')).trim();
  return { daemon, url: daemon.url, apiKey };
}

/**
 * Pids of QEMU processes whose command line names `home` (the VMs of the
 * node that lives there), or of anything under it.
 * @param {string} home
 * @returns {Promise<number[]>}
 */
export async function qemuProcessesUnder(home) {
  const pids = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmd = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmd.startsWith('qemu') || cmd.includes('/qemu-system')) {
      if (cmd.includes(home)) pids.push(Number(name));
    }
  }
  return pids;
}
