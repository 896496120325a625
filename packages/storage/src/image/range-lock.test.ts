import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RangeLock } from './range-lock.js';

describe('RangeLock', () => {
  it('runs overlapping operations one at a time, in arrival order', async () => {
    const lock = new RangeLock();
    const log: string[] = [];
    const op = (name: string, ms: number) => async () => {
      log.push(`${name}+`);
      await sleep(ms);
      log.push(`${name}-`);
    };
    await Promise.all([
      lock.run(0, 10, op('a', 20)),
      lock.run(5, 6, op('b', 1)),
      lock.run(5, 7, op('c', 1)),
    ]);
    assert.deepEqual(log, ['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
    assert.equal(lock.size, 0);
  });

  it('runs disjoint operations concurrently', async () => {
    const lock = new RangeLock();
    const log: string[] = [];
    await Promise.all([
      lock.run(0, 10, async () => {
        log.push('a+');
        await sleep(20);
        log.push('a-');
      }),
      lock.run(10, 20, async () => {
        log.push('b+');
        await sleep(1);
        log.push('b-');
      }),
    ]);
    assert.deepEqual(log, ['a+', 'b+', 'b-', 'a-']);
  });

  it('releases the range when the operation throws', async () => {
    const lock = new RangeLock();
    await assert.rejects(
      lock.run(0, 1, () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await lock.run(0, 1, () => Promise.resolve(7)), 7);
  });
});
