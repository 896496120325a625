/**
 * Plain-text tables of benchmark results: one per benchmark (rows with
 * p50/p90/p99, then ratios, skips and notes) and the summary of a whole
 * run, headed by the machine it ran on. Pure functions over the results
 * shapes of `report.mjs` and `results.mjs`; callers print the strings.
 *
 * @module
 */

/**
 * A number for a table cell: 3-4 significant digits, "-" when missing.
 * @param {number | undefined} x
 * @returns {string}
 */
export function formatFigure(x) {
  if (x === undefined || x === null || !Number.isFinite(x)) return '-';
  const abs = Math.abs(x);
  if (Number.isInteger(x)) return String(x);
  if (abs >= 1000) return Math.round(x).toString();
  if (abs >= 100) return x.toFixed(0);
  if (abs >= 10) return x.toFixed(1);
  if (abs >= 1) return x.toFixed(2);
  return x === 0 ? '0' : x.toFixed(3);
}

/**
 * Lays out `rows` under `header`, columns padded to their widest cell;
 * `right` marks right-aligned columns (by index).
 * @param {string[]} header
 * @param {string[][]} rows
 * @param {Set<number>} [right]
 * @returns {string}
 */
export function renderTable(header, rows, right = new Set()) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The figure rows of one benchmark, with section headings. */
function figureRows(rows) {
  const out = [];
  let section = '';
  for (const r of rows) {
    if (r.section !== section && r.section !== '') out.push([`[${r.section}]`, '', '', '', '', '']);
    section = r.section;
    const single = r.n === 1;
    out.push([
      `  ${r.name}`,
      formatFigure(r.p50),
      single ? '' : formatFigure(r.p90),
      single ? '' : formatFigure(r.p99),
      String(r.n),
      r.unit,
    ]);
  }
  return out;
}

/**
 * One benchmark's table: heading, figures, ratios, skips, notes and, for a
 * failed one, the error.
 * @param {Record<string, any>} b a benchmark entry of a results file
 * @returns {string}
 */
export function formatBench(b) {
  const load = b.load === undefined ? '' : `, load ${b.load.before}→${b.load.after}`;
  const took = b.durationS === undefined ? '' : ` in ${Math.round(b.durationS)} s`;
  const lines = [`== ${b.name}: ${b.title} — ${b.status}${took}${load}`];
  if (b.rows?.length > 0) {
    const header = ['figure', 'p50', 'p90', 'p99', 'n', 'unit'];
    lines.push(renderTable(header, figureRows(b.rows), new Set([1, 2, 3, 4])));
  }
  if (b.ratios?.length > 0) {
    lines.push('ratios:');
    for (const r of b.ratios) {
      const v = Number.isFinite(r.value) ? `${formatFigure(r.value)}x` : '-';
      lines.push(`  ${r.name}: ${v}${r.note === undefined ? '' : `  (${r.note})`}`);
    }
  }
  for (const s of b.skipped ?? []) lines.push(`skipped: ${s.what}: ${s.why}`);
  for (const n of b.notes ?? []) lines.push(`note: ${n}`);
  if (b.error !== undefined) lines.push(`error: ${b.error}`);
  return lines.join('\n');
}

/**
 * One line about the machine: what makes figures of two hosts incomparable.
 * @param {Record<string, any>} m the `machine` of a results file
 * @returns {string}
 */
export function formatMachine(m) {
  const gib = (m.memoryBytes / 2 ** 30).toFixed(0);
  return (
    `${m.cores} cores (${m.cpuModel}), ${gib} GiB, ${m.virtualization.mode.toUpperCase()} ` +
    `(${m.virtualization.reason}), kernel ${m.kernel}, ${m.qemu ?? 'no QEMU'}, node ${m.node}`
  );
}

/**
 * The summary of a run: machine, every benchmark's table, and the count of
 * benchmarks that failed or were skipped.
 * @param {Record<string, any>} run a results file
 * @returns {string}
 */
export function formatRun(run) {
  const parts = [
    `aenv benchmarks (${run.mode}), ${run.startedAt}, ${Math.round(run.durationS)} s`,
    `machine: ${formatMachine(run.machine)}`,
    `load average at start: ${run.machine.loadavg.join(' ')}`,
    '',
  ];
  for (const b of run.benchmarks) parts.push(formatBench(b), '');
  const failed = run.benchmarks.filter((b) => b.status === 'failed').map((b) => b.name);
  const skipped = run.benchmarks.filter((b) => b.status === 'skipped').map((b) => b.name);
  parts.push(
    `${run.benchmarks.length} benchmarks; failed: ${failed.join(', ') || 'none'}; ` +
      `skipped: ${skipped.join(', ') || 'none'}`,
  );
  return parts.join('\n');
}
