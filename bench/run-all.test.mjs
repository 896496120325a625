/**
 * Tests of the benchmark runner's selection and option parsing (no
 * benchmark runs here: `npm run bench -- --quick` is the smoke run).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseOption } from './lib/bench-main.mjs';
import { BENCHMARKS, selectBenchmarks } from './run-all.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

describe('selectBenchmarks', () => {
  it('runs everything by default, in order', () => {
    assert.deepEqual(selectBenchmarks([], []), BENCHMARKS);
  });

  it('keeps run order for --only and honours --skip', () => {
    const names = selectBenchmarks(['fork', 'create'], ['fork']).map((b) => b.name);
    assert.deepEqual(names, ['create']);
  });

  it('refuses unknown names', () => {
    assert.throws(() => selectBenchmarks(['nope'], []), /unknown benchmark 'nope'/);
  });

  it('names scripts that exist', () => {
    for (const b of BENCHMARKS) assert.ok(existsSync(join(root, b.script)), b.script);
  });
});

describe('parseOption', () => {
  it('parses like the default', () => {
    assert.equal(parseOption('12', 10), 12);
    assert.deepEqual(parseOption('1, 4,16', [1]), [1, 4, 16]);
    assert.deepEqual(parseOption('a,b', ['x']), ['a', 'b']);
    assert.equal(parseOption('256:0;1024:16', 'plan'), '256:0;1024:16');
    assert.throws(() => parseOption('x', 1), /not a number/);
  });
});
