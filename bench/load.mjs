#!/usr/bin/env node
/**
 * The load test: a node daemon (`aenv server` in its own process, so its
 * memory is its own) under 200 concurrent command streams and 50 creates
 * in flight through the proxy, for 10 minutes:
 *
 * - a pool of running sandboxes serves the streams (`commands.run` of the
 *   real `e2b` SDK, output streamed, each stream looping);
 * - create loops keep `--creates` create → command → kill cycles in flight
 *   (what the node cannot start at once waits in it or is refused, and is
 *   counted by error code);
 * - every `--sample-s` the daemon's Rss, Pss and open fds, and its QEMU
 *   processes.
 *
 * It prints per-minute p50/p99 of stream and create latency, errors by
 * code, the memory series and its verdict (flat: the last minute's Pss
 * average within `--tolerance` of the first minute's after warm-up). A full run writes
 * `bench/results/<date>-<machine>-load.json`. Exit status 1 (the entry
 * `failed`) when the daemon crashed, or sandboxes or QEMU processes were
 * left after the run; the memory verdict is a figure, printed, never the
 * exit status.
 *
 *   node bench/load.mjs [--quick] [--minutes 10] [--streams 200] [--creates 50]
 *                       [--sandboxes 12] [--sample-s 10] [--tolerance 0.15]
 *                       [--op-timeout-s 180]
 *
 * Needs root and a built repo (`packages/cli/dist`); artifacts from
 * $AENV_ARTIFACTS_DIR.
 *
 * @module
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Sandbox } from 'e2b';
import { runBench } from './lib/bench-main.mjs';
import { artifactsDir } from './lib/bench-node.mjs';
import { qemuProcessesUnder, startDaemon } from './lib/daemon-process.mjs';
import { toMiB } from './lib/host-memory.mjs';
import { countCodes, flatness } from './lib/load-stats.mjs';
import {
  createLoops,
  newLoadState,
  setOpTimeout,
  setStreamSeconds,
  streamLoops,
} from './lib/load-workers.mjs';
import { loadNow } from './lib/machine.mjs';
import { printMinutes, reportLoad, writeLoadResults } from './lib/load-report.mjs';

const PASS_THROUGH = /^AENV_(VMM|QEMU|FIRECRACKER|GUEST|NBD)_/;
/** How long the loops may take to finish their last operation after the deadline. */
const DRAIN_MS = 240_000;
const OP = { timeoutMs: 3_600_000, requestTimeoutMs: 180_000 };

async function startNode(ctx) {
  const { params } = ctx;
  const home = join(ctx.work, 'node');
  await mkdir(home, { recursive: true });
  const passed = Object.entries(process.env).filter(([k]) => PASS_THROUGH.test(k));
  // Room for the stream pool, every create in flight and the restore pool.
  const max = params.sandboxes + params.creates + 4;
  const { daemon, url, apiKey } = await startDaemon({
    home,
    env: {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      ...Object.fromEntries(passed),
      AENV_ARTIFACTS_DIR: artifactsDir(),
      AENV_NETWORK_PREFIX: 'bload',
      AENV_NETWORK_ADDRESS_POOL: '10.240.48.0/22',
      AENV_NETWORK_LOCK_DIR: join(home, 'lock'),
      AENV_LOG_LEVEL: 'warn',
      AENV_PAUSE_ON_SHUTDOWN: 'false',
      AENV_RESUME_ON_START: 'false',
      AENV_MAX_SANDBOXES: String(max),
    },
  });
  ctx.cleanup.add('stop the daemon', () => daemon.stop());
  return { daemon, sdk: { apiKey, apiUrl: url, sandboxUrl: url }, max };
}

/** Samples the daemon every `sampleS` until `state.stop`. */
async function sampleLoop(state, daemon, sampleS, series) {
  while (!state.stop && daemon.exited === undefined) {
    const t = performance.now() - state.t0;
    const s = await daemon.sample().catch(() => undefined);
    if (s !== undefined) {
      const qemu = (await qemuProcessesUnder(daemon.home)).length;
      series.push({ t, rss: s.rss, pss: s.pss, fds: s.fds, qemu, load: loadNow() });
    }
    await sleep(sampleS * 1000);
  }
}

/**
 * Kills the stream pool, then what the node still holds: sandboxes of the
 * create loops whose create the client gave up on (its timeout) but the
 * node finished are `abandoned` (killed now; E2B's contract too: a client
 * timeout does not cancel a create); anything else is `left` (a problem).
 */
async function leftovers(sdk, pool) {
  for (const s of pool) await s.kill(OP).catch(() => undefined);
  const running = await Sandbox.list({ ...sdk }).nextItems();
  const abandoned = running.filter((s) => s.metadata?.load === 'cycle').map((s) => s.sandboxId);
  for (const id of abandoned) await Sandbox.kill(id, { ...sdk, ...OP }).catch(() => undefined);
  const left = running.filter((s) => s.metadata?.load !== 'cycle').map((s) => s.sandboxId);
  return { left, abandoned };
}

async function runLoad(ctx) {
  const { params, progress } = ctx;
  const { daemon, sdk, max } = await startNode(ctx);
  progress(`daemon pid ${daemon.pid} ready; max sandboxes ${max}`);
  const pool = [];
  for (let i = 0; i < params.sandboxes; i++) {
    pool.push(await Sandbox.create('base', { ...sdk, ...OP }));
  }
  progress(`${pool.length} stream sandboxes running; load for ${params.minutes} min`);
  const state = newLoadState();
  const series = [];
  const loops = Promise.all([
    streamLoops(state, pool, params.streams),
    createLoops(state, sdk, params.creates),
    sampleLoop(state, daemon, params['sample-s'], series),
  ]);
  const minuteTimer = setInterval(() => {
    const last = series.at(-1);
    progress(
      `streams ${state.stream.length}, creates ${state.create.length}, errors ${state.errors.length}` +
        (last === undefined ? '' : `, daemon Pss ${toMiB(last.pss).toFixed(0)} MiB`),
    );
  }, 60_000);
  await Promise.race([sleep(params.minutes * 60_000), daemon.exit]);
  state.stop = true;
  clearInterval(minuteTimer);
  const elapsedMs = performance.now() - state.t0;
  progress('deadline: waiting for the operations in flight');
  const drained = await Promise.race([loops.then(() => true), sleep(DRAIN_MS, false)]);
  const problems = [];
  if (daemon.exited !== undefined) {
    problems.push(`the daemon exited during the run: ${JSON.stringify(daemon.exited)}`);
    problems.push(...daemon.tail.slice(-5));
  }
  if (!drained) problems.push(`operations still in flight ${DRAIN_MS / 1000} s after the end`);
  const { left, abandoned } =
    daemon.exited === undefined ? await leftovers(sdk, pool) : { left: [], abandoned: [] };
  if (left.length > 0) problems.push(`sandboxes left on the node: ${left.join(', ')}`);
  if (abandoned.length > 0) {
    progress(`${abandoned.length} creates the client had given up on were finished by the node`);
  }
  await daemon.stop();
  const qemuLeft = await qemuProcessesUnder(daemon.home);
  if (qemuLeft.length > 0) problems.push(`QEMU processes left: ${qemuLeft.join(', ')}`);
  if (daemon.exited?.code !== 0 && problems.length === 0) {
    problems.push(`the daemon's exit on SIGTERM: ${JSON.stringify(daemon.exited)}`);
  }
  return { state, series, elapsedMs, problems, max, abandoned: abandoned.length };
}

await runBench({
  name: 'load',
  title: 'command streams and creates in flight through the proxy for minutes; daemon memory',
  options: {
    minutes: { default: 10, quick: 1, doc: 'minutes of load' },
    streams: { default: 200, quick: 40, doc: 'concurrent command streams' },
    creates: { default: 50, quick: 4, doc: 'create → command → kill cycles in flight' },
    sandboxes: { default: 12, quick: 2, doc: 'running sandboxes the streams share' },
    'stream-s': {
      default: 30,
      quick: 10,
      doc: 'seconds each streaming command runs (a line a second)',
    },
    'sample-s': { default: 10, doc: 'seconds between samples of the daemon' },
    'op-timeout-s': {
      default: 180,
      doc: 'limit of each SDK call (a slower one counts as an error)',
    },
    tolerance: {
      default: 0.15,
      doc: 'flat: last minute within this share of the first after warm-up',
    },
  },
  requires: { root: true, commands: ['qemu-system-x86_64'] },
  run: async (ctx) => {
    const t0 = new Date();
    setOpTimeout(ctx.params['op-timeout-s'] * 1000);
    setStreamSeconds(ctx.params['stream-s']);
    const r = await runLoad(ctx);
    const minutes = Math.max(1, Math.ceil(r.elapsedMs / 60_000 - 0.05));
    const verdict = flatness(
      r.series.map((s) => ({ t: s.t, value: s.pss })),
      ctx.params.tolerance,
    );
    const errors = countCodes(r.state.errors.map((e) => e.code));
    reportLoad(ctx.report, { ...r, minutes, verdict, errors });
    printMinutes({ ...r, minutes, verdict, errors });
    if (!ctx.quick) {
      const path = await writeLoadResults(ctx.report, { startedAt: t0, problems: r.problems });
      ctx.progress(`results: ${path}`);
    }
    if (r.problems.length > 0) throw new Error(r.problems.join('; '));
  },
});
