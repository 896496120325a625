/**
 * A node daemon for one benchmark: `serveNode` in this process with its own
 * home (under the benchmark's work directory), network prefix, address pool
 * and lock directory, the shared guest artifact cache, and close-kills
 * (no pause on shutdown) registered in the benchmark's `Cleanup`. The
 * `AENV_VMM_*`, `AENV_QEMU_*` and `AENV_FIRECRACKER_*` variables of the
 * environment pass through, so `kvm-host.sh` runs the same benchmarks with
 * KVM or Firecracker.
 *
 * {@link BenchNode} wraps the HTTP API (timed), commands through the proxy
 * or straight to a guest's envd, the VMM process of a sandbox (for Pss) and
 * the node's own stage metrics. It also records the VMM's own operation
 * times from the vmm package's diagnostics channels.
 *
 * @module
 */
import { subscribe } from 'node:diagnostics_channel';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger, loadNodeConfig, serveNode } from '@aenv/server';
import { LOG_FIELDS } from '@aenv/shared';
import { STORAGE_CHANNELS } from '@aenv/storage';
import { VMM_CHANNELS } from '@aenv/vmm';
import { startProcess } from './envd-process.mjs';
import { processMemory } from './host-memory.mjs';
import { parseStageMetrics } from './stage-metrics.mjs';

/** envd's port inside every guest. */
export const ENVD_PORT = 49983;

/** The guest artifact cache the VM tests share (built once, minutes when cold). */
export function artifactsDir() {
  return (
    process.env.AENV_ARTIFACTS_DIR ?? process.env.AENV_TEST_CACHE ?? '/var/tmp/aenv-test-cache'
  );
}

const PASS_THROUGH = /^AENV_(VMM|QEMU|FIRECRACKER|GUEST|NBD)_/;

/**
 * The create body every benchmark uses. `secure: false`: envd then takes
 * calls without `X-Access-Token`, so the proxy path and the direct-to-envd
 * baselines do the same envd work and the benchmarks' own envd client
 * needs no token (the token check is not what they measure).
 */
export const BENCH_CREATE = Object.freeze({ templateID: 'base', timeout: 3600, secure: false });

/**
 * The VMM's own operation times (ms) by op (and the storage engine's
 * `seal`), and the VMM pid of each VM id.
 */
class VmmTimes {
  /** @type {Record<string, number[]>} */
  byOp = {};
  /** @type {Map<string, number>} */
  pids = new Map();

  constructor() {
    for (const op of ['boot', 'restore', 'prepare', 'snapshot', 'pause', 'resume']) {
      this.byOp[op] = [];
      subscribe(VMM_CHANNELS[op], (e) => {
        if (e[LOG_FIELDS.errorCode] !== undefined) return;
        this.byOp[op].push(e[LOG_FIELDS.durationMs]);
        const pid = e[LOG_FIELDS.vmPid];
        if (typeof pid === 'number') this.pids.set(e[LOG_FIELDS.sandboxId], pid);
      });
    }
    this.byOp.seal = [];
    subscribe(STORAGE_CHANNELS.seal, (e) => {
      const ms = e[LOG_FIELDS.durationMs];
      if (typeof ms === 'number') this.byOp.seal.push(ms);
    });
  }

  /** Takes (and forgets) the times of `op` recorded so far. */
  take(op) {
    return (this.byOp[op] ?? []).splice(0);
  }
}

const vmmTimes = new VmmTimes();

/** A started node and timed helpers over its API. */
export class BenchNode {
  constructor(node, config) {
    this.node = node;
    this.config = config;
    this.url = node.url;
    this.apiKey = node.apiKey;
    this.vmm = vmmTimes;
  }

  /** Options for the e2b SDK (`Sandbox.create('base', sdk)`) against this node. */
  get sdk() {
    return { apiKey: this.apiKey, apiUrl: this.url, sandboxUrl: this.url };
  }

  /**
   * One API call, timed: `{ status, ms, json }`.
   * @throws {Error} on a status >= 300 unless `allowError`.
   */
  async api(method, path, body, allowError = false) {
    const t0 = performance.now();
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { 'x-api-key': this.apiKey, 'content-type': 'application/json' },
      ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    const json = text === '' ? undefined : JSON.parse(text);
    if (res.status >= 300 && !allowError) {
      throw new Error(`${method} ${path}: ${res.status} ${text}`);
    }
    return { status: res.status, ms, json };
  }

  /**
   * Creates a sandbox from `templateID` (default base): `{ id, ms }`.
   * `secure: false` (see {@link BENCH_CREATE}) unless `body` says otherwise.
   */
  async create(body = {}) {
    const r = await this.api('POST', '/v2/sandboxes', { ...BENCH_CREATE, ...body });
    return { id: r.json.sandboxID, ms: r.ms };
  }

  /** Kills a sandbox (ignores one that is already gone). */
  async kill(id) {
    await this.api('DELETE', `/sandboxes/${id}`, undefined, true);
  }

  /** Runs `bash -c cmd` in a sandbox through the node's proxy; throws on a non-zero exit. */
  async run(id, cmd, timeoutMs) {
    const r = await startProcess(this.url, {
      cmd,
      headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': String(ENVD_PORT) },
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    if (r.exitCode !== 0) throw new Error(`${cmd}: exit ${r.exitCode}`);
    return r.stdout;
  }

  /**
   * Runs `/bin/true` (no shell) in a sandbox through the proxy: "the
   * sandbox answers a command", as cheaply as envd allows.
   */
  async answer(id) {
    const r = await startProcess(this.url, {
      cmd: '/bin/true',
      args: [],
      headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': String(ENVD_PORT) },
    });
    if (r.exitCode !== 0) throw new Error(`/bin/true in ${id}: exit ${r.exitCode}`);
  }

  /** The guest's envd as the host reaches it without the proxy (`http://host:port`). */
  envdUrl(id) {
    const a = this.node.orchestrator.address(id, ENVD_PORT);
    if (a === undefined) throw new Error(`sandbox ${id} has no running machine`);
    return `http://${a.host}:${a.port}`;
  }

  /** The pid of a sandbox's VMM process. */
  async vmmPid(id) {
    const file = join(this.config.home, 'sandboxes', id, 'run', 'qemu.pid');
    const text = await readFile(file, 'utf8').catch(() => undefined);
    const pid = text === undefined ? this.vmm.pids.get(id) : Number(text.trim());
    if (pid === undefined || !Number.isInteger(pid)) throw new Error(`no VMM pid for ${id}`);
    return pid;
  }

  /** Rss and Pss (bytes) of a sandbox's VMM process. */
  async memory(id) {
    return processMemory(await this.vmmPid(id));
  }

  /** The node's stage metrics (`GET /metrics`), parsed. */
  async stageMetrics() {
    const res = await fetch(`${this.url}/metrics`);
    return parseStageMetrics(await res.text());
  }

  /**
   * The prepared-restore pool of `base`: `{ ready, building }`, or
   * undefined when the node has none.
   */
  poolLevel() {
    return this.node.pool?.levels?.()[0];
  }

  /** Closes the node once (kills its sandboxes: no pause on shutdown). */
  close() {
    this.closing ??= this.node.close();
    return this.closing;
  }
}

/**
 * Starts a node for a benchmark and registers its close in `ctx.cleanup`.
 * @param {{ work: string, cleanup: import('@aenv/shared').Cleanup }} ctx
 * @param {{ name: string, prefix: string, addressPool: string, memoryMiB?: number, env?: Record<string, string> }} o
 *   prefix: 1-8 of [a-z0-9] (netns and nft names); addressPool: the slots' host-side /30s
 * @returns {Promise<BenchNode>}
 */
export async function startBenchNode(ctx, o) {
  const home = join(ctx.work, o.name);
  await mkdir(home, { recursive: true });
  const file = join(home, 'bench-config.json');
  await writeFile(file, JSON.stringify({ sandbox: { memoryMiB: o.memoryMiB ?? 512 } }));
  const passed = Object.entries(process.env).filter(([k]) => PASS_THROUGH.test(k));
  const config = loadNodeConfig(file, {
    PATH: process.env.PATH,
    ...Object.fromEntries(passed),
    AENV_HOME: home,
    AENV_PORT: '0',
    AENV_ARTIFACTS_DIR: artifactsDir(),
    AENV_NETWORK_PREFIX: o.prefix,
    AENV_NETWORK_ADDRESS_POOL: o.addressPool,
    AENV_NETWORK_LOCK_DIR: join(home, 'lock'),
    AENV_LOG_LEVEL: 'warn',
    AENV_PAUSE_ON_SHUTDOWN: 'false',
    AENV_RESUME_ON_START: 'false',
    ...o.env,
  });
  const node = new BenchNode(await serveNode({ config, logger: createLogger('warn') }), config);
  ctx.cleanup.add(`close node ${o.name}`, () => node.close());
  return node;
}
