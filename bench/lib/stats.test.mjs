/**
 * Tests of the summary statistics every results file is built from.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { percentile, ratio, round, summarize } from './stats.mjs';

describe('percentile', () => {
  it('is the nearest rank, never an interpolation', () => {
    const xs = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    assert.equal(percentile(xs, 50), 5);
    assert.equal(percentile(xs, 90), 9);
    assert.equal(percentile(xs, 99), 10);
    assert.equal(percentile(xs, 0), 1);
    assert.equal(percentile([42], 99), 42);
  });

  it('leaves non-finite samples out and is NaN without samples', () => {
    assert.equal(percentile([NaN, 3, Infinity, 1], 50), 1);
    assert.ok(Number.isNaN(percentile([], 50)));
  });
});

describe('summarize', () => {
  it('counts only finite samples', () => {
    const s = summarize([2, 4, NaN, 6]);
    assert.deepEqual(s, { n: 3, min: 2, p50: 4, p90: 6, p99: 6, max: 6, mean: 4 });
  });

  it('is all NaN for no samples', () => {
    const s = summarize([]);
    assert.equal(s.n, 0);
    for (const k of ['min', 'p50', 'p90', 'p99', 'max', 'mean']) assert.ok(Number.isNaN(s[k]), k);
  });
});

describe('ratio and round', () => {
  it('divides only finite figures by a positive one', () => {
    assert.equal(ratio(6, 3), 2);
    assert.ok(Number.isNaN(ratio(6, 0)));
    assert.ok(Number.isNaN(ratio(NaN, 3)));
    assert.ok(Number.isNaN(ratio(6, undefined)));
  });

  it('keeps 3-4 significant digits', () => {
    assert.equal(round(1234.567), 1234.6);
    assert.equal(round(12.3456), 12.35);
    assert.equal(round(0.123456), 0.1235);
    assert.ok(Number.isNaN(round(NaN)));
  });
});
