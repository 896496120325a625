/**
 * Tests of slot index allocation.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IndexAllocator } from './index-allocator.js';

describe('IndexAllocator', () => {
  it('hands out the lowest free indices and reuses released ones first', () => {
    const a = new IndexAllocator(10);
    assert.deepEqual(a.take(3), [0, 1, 2]);
    a.release(1);
    assert.deepEqual(a.take(2), [1, 3]);
    assert.equal(a.size, 4);
    assert.equal(a.free, 6);
  });

  it('skips reserved indices and stops at capacity', () => {
    const a = new IndexAllocator(4);
    a.reserve(0);
    a.reserve(2);
    assert.deepEqual(a.take(5), [1, 3]);
    assert.deepEqual(a.take(1), []);
    a.release(2);
    assert.ok(!a.has(2));
    assert.deepEqual(a.take(1), [2]);
  });
});
