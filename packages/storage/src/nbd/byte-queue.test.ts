import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteQueue } from './byte-queue.js';

describe('ByteQueue', () => {
  it('takes across chunk boundaries and keeps the rest', () => {
    const q = new ByteQueue();
    q.push(Buffer.from('abc'));
    q.push(Buffer.from(''));
    q.push(Buffer.from('defgh'));
    assert.equal(q.length, 8);
    assert.equal(q.peek(2).toString(), 'ab');
    assert.equal(q.take(4).toString(), 'abcd');
    q.skip(1);
    assert.equal(q.take(3).toString(), 'fgh');
    assert.equal(q.length, 0);
    assert.equal(q.take(0).length, 0, 'taking nothing from an empty queue is fine');
  });

  it('returns a view, not a copy, inside one chunk', () => {
    const q = new ByteQueue();
    const chunk = Buffer.from('0123456789');
    q.push(chunk);
    q.skip(2);
    const v = q.take(3);
    assert.equal(v.buffer, chunk.buffer);
    assert.equal(v.toString(), '234');
  });
});
