/**
 * Tests of the load test's arithmetic: per-minute buckets, error codes and
 * the memory flatness verdict.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countCodes, errorCode, flatness, perMinute } from './load-stats.mjs';

const MIN = 60_000;

describe('perMinute', () => {
  it('buckets by minute with nearest-rank p50/p99, empty minutes included', () => {
    const samples = [
      ...Array.from({ length: 100 }, (_, i) => ({ t: 1000 + i, ms: i + 1 })),
      { t: 2 * MIN + 5, ms: 7 },
    ];
    const m = perMinute(samples, 3);
    assert.deepEqual(
      m.map((x) => [x.minute, x.n, x.p50, x.p99]),
      [
        [1, 100, 50, 99],
        [2, 0, NaN, NaN],
        [3, 1, 7, 7],
      ],
    );
  });

  it('counts a sample past the end in the last minute', () => {
    assert.equal(perMinute([{ t: 5 * MIN, ms: 1 }], 2)[1].n, 1);
  });
});

describe('errorCode', () => {
  it('prefers an aenv code in the message', () => {
    assert.equal(errorCode(new Error('409: SBX_CAPACITY node is full')), 'SBX_CAPACITY');
  });

  it('falls back to the class name, then Error', () => {
    class TimeoutError extends Error {
      name = 'TimeoutError';
    }
    assert.equal(errorCode(new TimeoutError('took too long')), 'TimeoutError');
    assert.equal(errorCode(new Error('boom')), 'Error');
    assert.equal(errorCode('not an error'), 'unknown');
  });

  it('counts codes, largest first', () => {
    assert.deepEqual(Object.entries(countCodes(['a', 'b', 'b'])), [
      ['b', 2],
      ['a', 1],
    ]);
  });
});

describe('flatness', () => {
  const series = (f, minutes) =>
    Array.from({ length: minutes * 6 + 1 }, (_, i) => ({ t: i * 10_000, value: f(i) }));

  it('calls a steady series after warm-up flat', () => {
    const r = flatness(
      series((i) => (i < 6 ? 50 : 100 + (i % 3)), 10),
      0.15,
    );
    assert.equal(r.verdict, 'flat');
    assert.ok(Math.abs(r.change) < 0.05);
  });

  it('calls a steadily growing series growing', () => {
    const r = flatness(
      series((i) => 100 + i * 2, 10),
      0.15,
    );
    assert.equal(r.verdict, 'growing');
    assert.ok(r.change > 0.15);
  });

  it('names a shrinking series', () => {
    assert.equal(
      flatness(
        series((i) => 200 - i * 2, 10),
        0.15,
      ).verdict,
      'shrinking',
    );
  });

  it('takes the baseline from the first samples after warm-up when minute 2 has none', () => {
    const gappy = series((i) => (i < 15 ? 50 : 100), 10).filter(
      (s) => s.t < 60_000 || s.t >= 150_000,
    );
    const r = flatness(gappy, 0.15);
    assert.equal(r.verdict, 'flat');
    assert.equal(r.baseline, 100);
  });

  it('gives no verdict under three minutes', () => {
    const r = flatness(
      series(() => 1, 1),
      0.15,
    );
    assert.equal(r.verdict, 'too-short');
    assert.ok(Number.isNaN(r.baseline));
  });
});
