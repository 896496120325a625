import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ABSENT, BlockTable, ZERO } from './block-table.js';

describe('BlockTable', () => {
  it('reports unwritten blocks as absent and counts mapped blocks', () => {
    const t = new BlockTable(4096);
    assert.equal(t.get(7), ABSENT);
    t.set(5, 3, 8192);
    t.set(6, 1, ZERO);
    assert.equal(t.get(5), 8192);
    assert.equal(t.get(6), ZERO);
    assert.equal(t.get(7), 8192 + 2 * 4096);
    assert.equal(t.mappedBlocks, 3);
  });

  it('resolves a range into data, zero and absent segments that cover it exactly', () => {
    const t = new BlockTable(4096);
    t.set(2, 2, 0);
    t.set(4, 1, 40960);
    t.set(6, 2, ZERO);
    assert.deepEqual(t.resolve(0, 10), [
      { kind: 'absent', block: 0, count: 2 },
      { kind: 'data', block: 2, count: 2, ref: 0 },
      { kind: 'data', block: 4, count: 1, ref: 40960 },
      { kind: 'absent', block: 5, count: 1 },
      { kind: 'zero', block: 6, count: 2 },
      { kind: 'absent', block: 8, count: 2 },
    ]);
    assert.deepEqual(t.resolve(3, 1), [{ kind: 'data', block: 3, count: 1, ref: 4096 }]);
  });

  it('yields maximal runs across page boundaries, in block order', () => {
    const t = new BlockTable(512);
    t.set(2000, 10, ZERO);
    t.set(500, 30, 1024);
    t.set(100_000, 1, 0);
    assert.deepEqual(
      [...t.runs()],
      [
        { block: 500, count: 30, value: 1024 },
        { block: 2000, count: 10, value: ZERO },
        { block: 100_000, count: 1, value: 0 },
      ],
    );
  });

  it('splits runs where data offsets stop being contiguous', () => {
    const t = new BlockTable(4096);
    t.set(0, 2, 0);
    t.set(2, 2, 4096 * 10);
    assert.deepEqual(
      [...t.runs()].map((r) => [r.block, r.count]),
      [
        [0, 2],
        [2, 2],
      ],
    );
  });
});
