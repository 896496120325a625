/**
 * Tests of the benchmark report: rows, single figures, ratios, skips and
 * the results-file form, and the tables printed from them.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BenchReport } from './report.mjs';
import { formatBench, formatFigure, formatRun, renderTable } from './table.mjs';

function sample() {
  const r = new BenchReport({ name: 'x', title: 'a test', params: { runs: 3 }, quick: true });
  r.section('one');
  r.samples('latency', [30, 10, 20]);
  r.value('rate', 2.5, '/s', { why: 'kept' });
  r.ratio('latency / rate', 20, 2.5, 'a note');
  r.ratio('missing', 1, NaN);
  r.skip('peer', 'not installed');
  r.note('noisy host');
  return r;
}

describe('BenchReport', () => {
  it('summarizes samples and keeps them', () => {
    const row = sample().find('latency');
    assert.equal(row.section, 'one');
    assert.equal(row.n, 3);
    assert.equal(row.p50, 20);
    assert.equal(row.p99, 30);
    assert.deepEqual(row.samples, [30, 10, 20]);
  });

  it('keeps a single figure as a row of one sample with its extra fields', () => {
    const row = sample().find('rate');
    assert.equal(row.n, 1);
    assert.equal(row.p50, 2.5);
    assert.deepEqual(row.extra, { why: 'kept' });
  });

  it('records ratios (NaN when a figure is missing), skips and notes', () => {
    const j = sample().toJSON();
    assert.equal(j.ratios[0].value, 8);
    assert.equal(j.ratios[0].note, 'a note');
    assert.ok(Number.isNaN(j.ratios[1].value));
    assert.deepEqual(j.skipped, [{ what: 'peer', why: 'not installed' }]);
    assert.deepEqual(j.notes, ['noisy host']);
    assert.deepEqual(j.params, { runs: 3 });
  });
});

describe('tables', () => {
  it('formats figures to a few significant digits, "-" when missing', () => {
    assert.equal(formatFigure(1234.56), '1235');
    assert.equal(formatFigure(123.4), '123');
    assert.equal(formatFigure(12.34), '12.3');
    assert.equal(formatFigure(1.234), '1.23');
    assert.equal(formatFigure(0.1234), '0.123');
    assert.equal(formatFigure(64), '64');
    assert.equal(formatFigure(NaN), '-');
    assert.equal(formatFigure(undefined), '-');
  });

  it('pads columns and right-aligns the numeric ones', () => {
    const t = renderTable(
      ['a', 'bb'],
      [
        ['xyz', '1'],
        ['q', '22'],
      ],
      new Set([1]),
    );
    assert.deepEqual(t.split('\n'), ['a    bb', '---  --', 'xyz   1', 'q    22']);
  });

  it('prints a benchmark with its ratios, skips, notes and error', () => {
    const text = formatBench({
      ...sample().toJSON(),
      status: 'failed',
      error: 'boom',
      durationS: 3,
    });
    assert.match(text, /== x: a test — failed in 3 s/);
    assert.match(text, /\[one\]/);
    assert.match(text, / {2}latency +20 +30 +30 +3 +ms/);
    assert.match(text, /latency \/ rate: 8x {2}\(a note\)/);
    assert.match(text, /missing: -/);
    assert.match(text, /skipped: peer: not installed/);
    assert.match(text, /error: boom/);
  });

  it('sums up a run: machine, tables, failures', () => {
    const machine = {
      cores: 2,
      cpuModel: 'cpu',
      memoryBytes: 24 * 2 ** 30,
      virtualization: { mode: 'tcg', reason: 'no kvm' },
      kernel: '6.1',
      qemu: 'QEMU 7.2',
      node: 'v20',
      loadavg: [1, 2, 3],
    };
    const ok = { ...sample().toJSON(), status: 'ok' };
    const bad = { name: 'y', title: 't', status: 'failed', rows: [], ratios: [], error: 'exit 1' };
    const text = formatRun({
      mode: 'quick',
      startedAt: 'now',
      durationS: 9,
      machine,
      benchmarks: [ok, bad],
    });
    assert.match(text, /2 cores \(cpu\), 24 GiB, TCG \(no kvm\)/);
    assert.match(text, /2 benchmarks; failed: y; skipped: none/);
  });
});
