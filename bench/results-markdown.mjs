#!/usr/bin/env node
/**
 * Renders a results file as Markdown tables, so every figure quoted in
 * `docs/performance.md` comes from a results file in the repository:
 *
 *   node bench/results-markdown.mjs bench/results/<file>.json           # print
 *   node bench/results-markdown.mjs bench/results/<file>.json --write docs/performance.md
 *
 * `--write` replaces what stands between `<!-- results:begin -->` and
 * `<!-- results:end -->` in that file (and nothing else);
 * `bench/results-markdown.test.mjs` checks that the block in
 * docs/performance.md is exactly what its results file renders to.
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as prettier from 'prettier';
import { formatFigure, formatMachine } from './lib/table.mjs';

export const BEGIN = '<!-- results:begin -->';
export const END = '<!-- results:end -->';
const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

const cell = (s) => String(s).replace(/\|/g, '\\|');

function benchMarkdown(b) {
  const lines = [`### ${b.name}: ${b.title}`, ''];
  const load = b.load === undefined ? '' : `, load ${b.load.before} → ${b.load.after}`;
  lines.push(`${b.status}, ${Math.round(b.durationS ?? 0)} s${load}.`, '');
  if (b.rows.length > 0) {
    lines.push(
      '| figure | p50 | p90 | p99 | n | unit |',
      '| --- | ---: | ---: | ---: | ---: | --- |',
    );
    let section = '';
    for (const r of b.rows) {
      if (r.section !== section && r.section !== '')
        lines.push(`| **${cell(r.section)}** | | | | | |`);
      section = r.section;
      const one = r.n === 1;
      const [p90, p99] = one ? ['', ''] : [formatFigure(r.p90), formatFigure(r.p99)];
      lines.push(
        `| ${cell(r.name.trim())} | ${formatFigure(r.p50)} | ${p90} | ${p99} | ${r.n} | ${r.unit} |`,
      );
    }
    lines.push('');
  }
  for (const r of b.ratios) {
    const v = Number.isFinite(r.value) ? `${formatFigure(r.value)}×` : '–';
    lines.push(`- ${cell(r.name)}: **${v}**${r.note === undefined ? '' : ` (${r.note})`}`);
  }
  for (const s of b.skipped) lines.push(`- skipped: ${s.what}: ${s.why}`);
  for (const n of b.notes) lines.push(`- note: ${n}`);
  if (b.error !== undefined) lines.push(`- error: ${b.error}`);
  lines.push('');
  return lines.join('\n');
}

const STAGE_ROW = /^node: (\S+) (\S+), mean of (\d+)$/;

/**
 * The node's own per-stage means (rows `node: <op> <stage>, mean of <n>`,
 * from its `GET /metrics`) as one table per run: each stage's share of its
 * operation's `total`, so what dominates a latency is read off the daemon's
 * metrics rather than guessed from the outside.
 */
export function stageBreakdown(run) {
  const ops = new Map();
  for (const b of run.benchmarks) {
    for (const r of b.rows) {
      const m = STAGE_ROW.exec(r.name.trim());
      if (m === null) continue;
      const key = `${b.name}: ${m[1]}`;
      if (!ops.has(key)) ops.set(key, []);
      ops.get(key).push({ stage: m[2], count: Number(m[3]), ms: r.p50 });
    }
  }
  if (ops.size === 0) return [];
  const lines = [
    "### Per stage: the node's own metrics",
    '',
    '| benchmark: operation | stage | mean | share of total | operations |',
    '| --- | --- | ---: | ---: | ---: |',
  ];
  for (const [key, stages] of ops) {
    const total = stages.find((s) => s.stage === 'total')?.ms;
    const ordered = [
      ...stages.filter((s) => s.stage !== 'total'),
      ...stages.filter((s) => s.stage === 'total'),
    ];
    for (const s of ordered) {
      const share =
        total === undefined || s.stage === 'total' ? '' : `${Math.round((s.ms / total) * 100)} %`;
      lines.push(
        `| ${cell(key)} | ${s.stage} | ${formatFigure(s.ms)} ms | ${share} | ${s.count} |`,
      );
    }
  }
  lines.push('');
  return lines;
}

/**
 * The Markdown of a results file (`file` is how the text names it),
 * formatted as the repository's Prettier settings format docs (so
 * `npm run format` leaves the block alone).
 * @param {Record<string, any>} run
 * @param {string} file
 * @returns {Promise<string>}
 */
export async function resultsMarkdown(run, file) {
  const head = [
    `Results file: \`${file}\` (${run.mode} run, ${run.startedAt}, ${Math.round(run.durationS / 60)} min,`,
    `commit \`${run.git?.commit?.slice(0, 12) ?? 'unknown'}\`${run.git?.dirty ? ' with uncommitted changes' : ''}).`,
    `Machine: ${formatMachine(run.machine)}; load average at start ${run.machine.loadavg.join(' ')}.`,
    '',
  ];
  const md = [...head, ...stageBreakdown(run), ...run.benchmarks.map(benchMarkdown)].join('\n');
  const options = (await prettier.resolveConfig(join(root, 'docs/performance.md'))) ?? {};
  return (await prettier.format(md, { ...options, parser: 'markdown' })).trimEnd();
}

/** Replaces the block between the markers of `text` with `block`. */
export function replaceBlock(text, block) {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`no ${BEGIN} ... ${END} block`);
  // Blank lines around the block: Prettier's Markdown layout, so `npm run format` keeps it.
  return `${text.slice(0, a + BEGIN.length)}\n\n${block}\n\n${text.slice(b)}`;
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { write: { type: 'string' } },
  });
  if (positionals.length !== 1)
    throw new Error('usage: results-markdown.mjs <results.json> [--write FILE]');
  const path = resolve(positionals[0]);
  const md = await resultsMarkdown(JSON.parse(await readFile(path, 'utf8')), relative(root, path));
  if (values.write === undefined) {
    console.log(md);
    return;
  }
  const target = resolve(values.write);
  await writeFile(target, replaceBlock(await readFile(target, 'utf8'), md));
  console.error(`wrote the results block of ${relative(process.cwd(), target)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  });
}
