#!/usr/bin/env node
/**
 * `npm run bench`: runs every benchmark, one after another, each as a child
 * process (`node <script> --out <file> [--quick]`, so a crash or a leak of
 * one never spoils the next), with a time limit each; then writes one
 * results file, `bench/results/<date>-<machine>.json` (the machine: KVM or
 * TCG, cores, memory; see lib/machine.mjs), and prints the summary table:
 * p50/p90/p99 of every figure and the ratios of each benchmark.
 *
 *   npm run bench [-- --quick] [-- --only create,fork] [-- --skip peers]
 *                 [-- --out-dir DIR] [-- --list]
 *
 * `--quick` runs every benchmark with tiny counts (every path exercised, a
 * few minutes; CI's smoke run) and writes its results under the OS temp
 * directory unless `--out-dir` says otherwise. Exit status: 1 when a
 * benchmark crashed (a rotted benchmark), never because of a figure.
 *
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import * as prettier from 'prettier';
import { describeMachine } from './lib/machine.mjs';
import { formatRun } from './lib/table.mjs';

const exec = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);

/** Every benchmark, in run order, with its time limit (s) in a full run. */
export const BENCHMARKS = [
  { name: 'create', script: 'bench/create.mjs', limitS: 600 },
  { name: 'lifecycle', script: 'bench/lifecycle.mjs', limitS: 600 },
  { name: 'fork', script: 'bench/fork.mjs', limitS: 600 },
  { name: 'density', script: 'bench/density.mjs', limitS: 900 },
  { name: 'throughput', script: 'bench/throughput.mjs', limitS: 600 },
  { name: 'storage', script: 'bench/storage.mjs', limitS: 600 },
  { name: 'storage-guest', script: 'bench/storage-guest.mjs', limitS: 600 },
  { name: 'network', script: 'bench/network.mjs', limitS: 300 },
  { name: 'envd', script: 'bench/envd.mjs', limitS: 300 },
  { name: 'peers', script: 'bench/peers.mjs', limitS: 600 },
  { name: 'vmm-snapshot-cost', script: 'packages/vmm/bench/snapshot-cost.mjs', limitS: 600 },
  { name: 'vmm-clone-fanout', script: 'packages/vmm/bench/clone-fanout.mjs', limitS: 600 },
  { name: 'vmm-balloon', script: 'packages/vmm/bench/balloon.mjs', limitS: 300 },
  { name: 'vmm-boot-vs-restore', script: 'packages/vmm/bench/boot-vs-restore.mjs', limitS: 300 },
  { name: 'scheduler-sim', script: 'bench/scheduler-sim.mjs', limitS: 600 },
];
const QUICK_LIMIT_S = 300;
/** The benchmark running now, and whether the run was interrupted (SIGINT/SIGTERM). */
const state = { child: undefined, interrupted: undefined };
const KILL_GRACE_MS = 60_000;

/** The benchmarks `--only`/`--skip` select, in run order; unknown names are an error. */
export function selectBenchmarks(only, skip) {
  const known = new Set(BENCHMARKS.map((b) => b.name));
  for (const n of [...only, ...skip]) {
    if (!known.has(n))
      throw new Error(`unknown benchmark '${n}' (known: ${[...known].join(', ')})`);
  }
  return BENCHMARKS.filter(
    (b) => (only.length === 0 || only.includes(b.name)) && !skip.includes(b.name),
  );
}

const list = (s) => (s ?? '').split(',').filter((x) => x !== '');

/** The commit checked out and whether the tree has changes (undefined outside git). */
export async function gitState() {
  try {
    const commit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: root })).stdout.trim();
    const status = (await exec('git', ['status', '--porcelain'], { cwd: root })).stdout;
    return { commit, dirty: status.trim() !== '' };
  } catch {
    return { commit: undefined, dirty: undefined };
  }
}

/**
 * Runs one benchmark script as a child: stdout and stderr into its log,
 * stderr also to ours (progress); SIGTERM at the limit (the benchmark
 * cleans up and records the interruption), SIGKILL a minute later.
 */
async function runOne(b, o) {
  const out = join(o.logDir, `${b.name}.json`);
  const logPath = join(o.logDir, `${b.name}.log`);
  const log = createWriteStream(logPath);
  const args = [join(root, b.script), '--out', out, ...(o.quick ? ['--quick'] : [])];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  state.child = child;
  child.stdout.pipe(log, { end: false });
  createInterface({ input: child.stderr }).on('line', (line) => {
    log.write(`${line}\n`);
    if (line.startsWith(`[${b.name} `)) process.stderr.write(`${line}\n`);
  });
  const limitS = o.quick ? QUICK_LIMIT_S : b.limitS;
  let timedOut = false;
  const term = setTimeout(() => {
    timedOut = true;
    child.kill('SIGTERM');
  }, limitS * 1000);
  const kill = setTimeout(() => child.kill('SIGKILL'), limitS * 1000 + KILL_GRACE_MS);
  const [code, signal] = await once(child, 'exit');
  state.child = undefined;
  clearTimeout(term);
  clearTimeout(kill);
  log.end();
  const durationS = Math.round((performance.now() - t0) / 100) / 10;
  const entry = existsSync(out) ? JSON.parse(await readFile(out, 'utf8')) : undefined;
  if (entry !== undefined && !timedOut) return entry;
  const why = timedOut ? `over its ${limitS} s limit` : `exit ${code ?? signal}, no results`;
  return {
    ...(entry ?? { name: b.name, title: b.script, rows: [], ratios: [], notes: [], skipped: [] }),
    status: 'failed',
    durationS,
    error: `${why} (log: ${logPath})`,
  };
}

async function resultsPath(dir, stem) {
  await mkdir(dir, { recursive: true });
  for (let i = 1; ; i++) {
    const path = join(dir, `${stem}${i === 1 ? '' : `-${i}`}.json`);
    if (!existsSync(path)) return path;
  }
}

/**
 * Writes the results file: `bench/results/<date>-<machine>.json` for a full
 * run, the OS temp directory for a quick one, unless `outDir` says where.
 */
async function writeRun(run, outDir) {
  const quick = run.mode === 'quick';
  const dir = outDir ?? (quick ? join(tmpdir(), 'aenv-bench-quick') : join(root, 'bench/results'));
  const stem = `${run.startedAt.slice(0, 10)}-${run.machine.slug}${quick ? '-quick' : ''}`;
  const path = await resultsPath(dir, stem);
  // Formatted as the repository's Prettier formats JSON, so a committed
  // results file passes `npm run lint` as written.
  const options = (await prettier.resolveConfig(path)) ?? {};
  await writeFile(path, await prettier.format(JSON.stringify(run), { ...options, parser: 'json' }));
  return path;
}

async function main() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      skip: { type: 'string' },
      'out-dir': { type: 'string' },
      list: { type: 'boolean', default: false },
    },
  });
  const selected = selectBenchmarks(list(values.only), list(values.skip));
  if (values.list) {
    for (const b of BENCHMARKS) console.log(`${b.name.padEnd(22)} ${b.script}`);
    return 0;
  }
  if (!existsSync(join(root, 'packages/server/dist/src/index.js'))) {
    throw new Error('the repository is not built: run npm run build first');
  }
  const quick = values.quick === true;
  const startedAt = new Date();
  const t0 = performance.now();
  const machine = await describeMachine();
  const logDir = await mkdtemp(join(tmpdir(), 'aenv-bench-logs-'));
  process.stderr.write(
    `benchmarks (${quick ? 'quick' : 'full'}): ${selected.map((b) => b.name).join(', ')}\n`,
  );
  process.stderr.write(
    `machine: ${machine.slug}, load ${machine.loadavg.join(' ')}; logs in ${logDir}\n`,
  );
  const benchmarks = [];
  for (const b of selected) {
    if (state.interrupted !== undefined) break;
    const entry = await runOne(b, { quick, logDir });
    benchmarks.push(entry);
    process.stderr.write(`${b.name}: ${entry.status} in ${Math.round(entry.durationS ?? 0)} s\n`);
  }
  const run = {
    schema: 'aenv-bench/1',
    mode: quick ? 'quick' : 'full',
    startedAt: startedAt.toISOString(),
    durationS: Math.round((performance.now() - t0) / 1000),
    command: `node bench/run-all.mjs ${process.argv.slice(2).join(' ')}`.trim(),
    ...(state.interrupted === undefined ? {} : { interrupted: state.interrupted }),
    git: await gitState(),
    machine,
    benchmarks,
  };
  const path = await writeRun(run, values['out-dir']);
  console.log(formatRun(run));
  console.log(`\nresults: ${path.startsWith(root) ? relative(root, path) : path}`);
  if (state.interrupted !== undefined) return 130;
  return benchmarks.some((b) => b.status === 'failed') ? 1 : 0;
}

/**
 * A signal stops the run after the benchmark in progress: it gets SIGTERM
 * (and cleans up), the results so far are written.
 */
function onSignal(signal) {
  state.interrupted = signal;
  process.stderr.write(`${signal}: stopping after the benchmark in progress\n`);
  state.child?.kill('SIGTERM');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(2);
    },
  );
}
