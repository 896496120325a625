/**
 * What the load test (`bench/load.mjs`) reports: its figures as rows of the
 * benchmark's entry (each latency row keeps its per-minute p50/p99 in
 * `extra.perMinute`, the memory rows the series with times), the
 * per-minute table it prints, and its own results file
 * (`bench/results/<date>-<machine>-load.json`, the shape `run-all.mjs`
 * writes, machine and git state included).
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { gitState } from '../run-all.mjs';
import { toMiB } from './host-memory.mjs';
import { perMinute } from './load-stats.mjs';
import { describeMachine } from './machine.mjs';
import { formatFigure, renderTable } from './table.mjs';

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/**
 * @typedef {object} LoadRun
 * @property {import('./load-workers.mjs').LoadState} state
 * @property {{ t: number, rss: number, pss: number, fds: number, qemu: number, load: number }[]} series
 * @property {number} elapsedMs
 * @property {number} minutes
 * @property {number} max the node's sandbox limit
 * @property {string[]} problems
 * @property {number} [abandoned] creates the client gave up on that the node finished
 * @property {import('./load-stats.mjs').Flatness} verdict
 * @property {Record<string, number>} errors counts by `<step>:<code>`
 */

const KINDS = [
  ['stream', 'command stream (a line a second), whole'],
  ['firstOutput', 'command stream, time to first output'],
  ['lineLate', 'command stream, lateness of each line against its 1 s beat'],
  ['create', 'create (API, the e2b SDK)'],
  ['cycle', 'create → command → kill cycle'],
];

/**
 * Adds the run's figures to `report`.
 * @param {import('./report.mjs').BenchReport} report
 * @param {LoadRun} r
 */
export function reportLoad(report, r) {
  const s = r.elapsedMs / 1000;
  report.section('latency through the proxy, whole run');
  for (const [key, name] of KINDS) {
    const samples = r.state[key];
    report.samples(
      name,
      samples.map((x) => x.ms),
      'ms',
      { perMinute: perMinute(samples, r.minutes) },
    );
  }
  report.section('throughput and errors');
  report.value('command streams completed per second', r.state.stream.length / s, '/s');
  report.value('create cycles completed per second', r.state.cycle.length / s, '/s');
  report.value('errors', r.state.errors.length, 'errors', {
    byCode: r.errors,
    messages: r.state.messages,
  });
  report.section('the daemon (aenv server process)');
  const at = r.series.map((x) => Math.round(x.t / 1000));
  report.samples(
    'daemon Pss',
    r.series.map((x) => toMiB(x.pss)),
    'MiB',
    { atS: at },
  );
  report.samples(
    'daemon Rss',
    r.series.map((x) => toMiB(x.rss)),
    'MiB',
  );
  report.samples(
    'daemon open fds',
    r.series.map((x) => x.fds),
    'fds',
  );
  report.samples(
    'QEMU processes of the node',
    r.series.map((x) => x.qemu),
    'processes',
  );
  report.value('daemon Pss, last minute vs. first after warm-up', r.verdict.change * 100, '%', {
    verdict: r.verdict.verdict,
  });
  report.note(
    `memory verdict: ${r.verdict.verdict} (Pss first minute after warm-up ${toMiB(r.verdict.baseline).toFixed(1)} MiB, ` +
      `last minute ${toMiB(r.verdict.last).toFixed(1)} MiB)`,
  );
  report.note(
    `the node's limit was ${r.max} sandboxes (stream pool + creates in flight + 4); creates it ` +
      `could not start at once waited in it or were refused (errors by code)`,
  );
  for (const [code, n] of Object.entries(r.errors)) report.note(`error ${code}: ${n}`);
  if (r.abandoned > 0) {
    report.note(
      `${r.abandoned} creates the client gave up on (its timeout) were finished by the node`,
    );
  }
  for (const p of r.problems) report.note(`problem: ${p}`);
}

const cell = (x) => (Number.isFinite(x) ? formatFigure(x) : '-');

/**
 * Prints the per-minute table (stdout): streams done, time to a stream's
 * first line, line lateness p99, create p50/p99, errors,
 * and the daemon's memory and fds.
 * @param {LoadRun} r
 */
export function printMinutes(r) {
  const streams = perMinute(r.state.stream, r.minutes);
  const first = perMinute(r.state.firstOutput, r.minutes);
  const late = perMinute(r.state.lineLate, r.minutes);
  const creates = perMinute(r.state.create, r.minutes);
  const rows = streams.map((m, i) => {
    const inMinute = (x) => Math.floor(x.t / 60_000) === i;
    const errs = r.state.errors.filter(inMinute).length;
    const mem = r.series.filter(inMinute);
    const avg = (f) => (mem.length === 0 ? NaN : mem.reduce((a, x) => a + f(x), 0) / mem.length);
    return [
      String(m.minute),
      String(m.n),
      cell(first[i].p50),
      cell(first[i].p99),
      cell(late[i].p99),
      String(creates[i].n),
      cell(creates[i].p50),
      cell(creates[i].p99),
      String(errs),
      cell(avg((x) => toMiB(x.pss))),
      cell(avg((x) => x.fds)),
    ];
  });
  const header = ['min', 'streams', '1st line p50', 'p99', 'line late p99', 'creates'];
  header.push('p50 ms', 'p99 ms', 'errors', 'Pss MiB', 'fds');
  const numeric = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  console.log(`\nper minute (ms)\n${renderTable(header, rows, numeric)}`);
  console.log(`errors by code: ${JSON.stringify(r.errors)}`);
  for (const [code, msgs] of Object.entries(r.state.messages)) {
    for (const m of msgs) console.log(`  ${code}: ${m.slice(0, 300)}`);
  }
  const v = r.verdict;
  console.log(
    `daemon memory: ${v.verdict} (Pss first minute after warm-up ${cell(toMiB(v.baseline))} MiB, ` +
      `last minute ${cell(toMiB(v.last))} MiB, change ${cell(v.change * 100)} %)`,
  );
  if (r.problems.length > 0) console.log(`problems:\n  ${r.problems.join('\n  ')}`);
}

async function freePath(dir, stem) {
  await mkdir(dir, { recursive: true });
  for (let i = 1; ; i++) {
    const path = join(dir, `${stem}${i === 1 ? '' : `-${i}`}.json`);
    if (!existsSync(path)) return path;
  }
}

/**
 * Writes the results file of a full load run, formatted as Prettier
 * formats JSON; returns its path relative to the repository.
 * @param {import('./report.mjs').BenchReport} report
 * @param {{ startedAt: Date, problems: string[] }} o
 */
export async function writeLoadResults(report, o) {
  const machine = await describeMachine();
  const durationS = Math.round((Date.now() - o.startedAt.getTime()) / 1000);
  const failed = o.problems.length > 0;
  const run = {
    schema: 'aenv-bench/1',
    mode: 'full',
    startedAt: o.startedAt.toISOString(),
    durationS,
    command: `node bench/load.mjs ${process.argv.slice(2).join(' ')}`.trim(),
    git: await gitState(),
    machine,
    benchmarks: [
      {
        ...report.toJSON(),
        status: failed ? 'failed' : 'ok',
        ...(failed ? { error: o.problems.join('; ') } : {}),
        startedAt: o.startedAt.toISOString(),
        durationS,
      },
    ],
  };
  const stem = `${run.startedAt.slice(0, 10)}-${machine.slug}-load`;
  const path = await freePath(join(root, 'bench/results'), stem);
  const options = (await prettier.resolveConfig(path)) ?? {};
  await writeFile(path, await prettier.format(JSON.stringify(run), { ...options, parser: 'json' }));
  return relative(root, path);
}
