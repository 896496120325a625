/**
 * The frame every benchmark script runs in, so each stays runnable alone
 * (`node bench/<name>.mjs [--quick] [--out FILE] [--<option> V]`) and
 * `run-all.mjs` can run it as a child:
 *
 * - options with a full and a `--quick` default (numbers, or comma lists);
 * - a temporary work directory and a `Cleanup` (LIFO undo steps, also run
 *   on SIGINT/SIGTERM) that removes everything the benchmark started;
 * - requirements (root, commands): a benchmark that cannot run here ends
 *   `skipped` with the reason, never silently;
 * - the table on stdout, progress on stderr, and with `--out` the
 *   benchmark's entry of a results file (status, duration, load average
 *   before and after, figures).
 *
 * Exit status: 0 when the benchmark ran or was skipped, 1 when it crashed.
 * Figures never decide the status.
 *
 * @module
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Cleanup } from '@aenv/shared';
import { findExecutable } from '@aenv/vmm';
import { loadNow } from './machine.mjs';
import { BenchReport } from './report.mjs';
import { formatBench } from './table.mjs';

/**
 * Parses one option value like its default: a number, a list (of numbers
 * when the default's are) or a string.
 */
export function parseOption(raw, like) {
  if (Array.isArray(like)) {
    const items = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    return typeof like[0] === 'number' ? items.map(Number) : items;
  }
  if (typeof like === 'number') {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new Error(`not a number: ${raw}`);
    return n;
  }
  return raw;
}

function usage(spec) {
  const lines = [`node bench/${spec.name}.mjs [--quick] [--out FILE]`, `  ${spec.title}`];
  for (const [k, o] of Object.entries(spec.options ?? {})) {
    lines.push(`  --${k} V   ${o.doc} (default ${o.default}, quick ${o.quick ?? o.default})`);
  }
  return lines.join('\n');
}

function resolveParams(spec, values, quick) {
  const params = {};
  for (const [k, o] of Object.entries(spec.options ?? {})) {
    const fallback = quick && o.quick !== undefined ? o.quick : o.default;
    params[k] = values[k] === undefined ? fallback : parseOption(values[k], o.default);
  }
  return params;
}

async function missingRequirement(req = {}) {
  if (req.root === true && process.getuid?.() !== 0) return 'needs root';
  for (const cmd of req.commands ?? []) {
    if ((await findExecutable(cmd)) === undefined) return `${cmd} is not installed`;
  }
  return undefined;
}

function errorText(err) {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (cause: ${err.cause.message})` : '';
  return `${err.message}${cause}`;
}

/**
 * Runs a benchmark script. `spec.run(ctx)` measures and fills `ctx.report`;
 * ctx: `{ params, quick, report, cleanup, work, progress(msg) }`.
 * @param {{ name: string, title: string, options?: Record<string, { default: unknown, quick?: unknown, doc: string }>, requires?: { root?: boolean, commands?: string[] }, run: (ctx: any) => Promise<void> }} spec
 */
export async function runBench(spec) {
  const optionSpecs = Object.fromEntries(
    Object.keys(spec.options ?? {}).map((k) => [k, { type: 'string' }]),
  );
  const { values } = parseArgs({
    options: {
      ...optionSpecs,
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage(spec));
    return;
  }
  const quick = values.quick === true;
  const params = resolveParams(spec, values, quick);
  const report = new BenchReport({ name: spec.name, title: spec.title, params, quick });
  const startedAt = new Date();
  const t0 = performance.now();
  const entry = { status: 'ok', startedAt: startedAt.toISOString(), load: { before: loadNow() } };
  const cleanup = new Cleanup();
  const work = await mkdtemp(join(tmpdir(), `aenv-bench-${spec.name}-`));
  cleanup.add('remove work directory', () => rm(work, { recursive: true, force: true }));
  const progress = (msg) =>
    process.stderr.write(
      `[${spec.name} +${((performance.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`,
    );

  const finish = async () => {
    await cleanup.run().catch((err) => {
      entry.status = 'failed';
      entry.error = `cleanup: ${errorText(err)}`;
    });
    entry.durationS = Math.round((performance.now() - t0) / 100) / 10;
    entry.load.after = loadNow();
    const result = { ...report.toJSON(), ...entry };
    if (values.out !== undefined) await writeFile(values.out, `${JSON.stringify(result)}\n`);
    await new Promise((resolve) => process.stdout.write(`\n${formatBench(result)}\n`, resolve));
    return result.status === 'failed' ? 1 : 0;
  };
  const onSignal = (signal) => {
    entry.status = 'failed';
    entry.error = `interrupted by ${signal}`;
    void finish().then(() => process.exit(130));
  };
  // `once`: a second signal during the cleanup ends the process the default way.
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const missing = await missingRequirement(spec.requires);
  if (missing !== undefined) {
    entry.status = 'skipped';
    report.skip(spec.name, missing);
  } else {
    try {
      await spec.run({ params, quick, report, cleanup, work, progress });
    } catch (err) {
      entry.status = 'failed';
      entry.error = errorText(err);
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    }
  }
  // Exit even if something still holds the event loop: a benchmark that
  // leaked a handle must not stall the run-all (its cleanup already ran).
  process.exit(await finish());
}
