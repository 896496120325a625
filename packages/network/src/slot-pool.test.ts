/**
 * Tests of the pool's watermark logic. The build function here is an
 * in-memory STAND-IN for `HostNetwork.build` (which the suites in `test/`
 * exercise for real): it lets these tests control timing and failures.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DENY_ALL_EGRESS_POLICY } from './egress-policy.js';
import { SlotResource } from './slot.js';
import { SlotPool } from './slot-pool.js';

function standInBuilder(capacity = Infinity) {
  let next = 0;
  const calls: number[] = [];
  let failures = 0;
  return {
    calls,
    failNext(n: number) {
      failures = n;
    },
    build: async (count: number): Promise<SlotResource[]> => {
      calls.push(count);
      await new Promise((r) => setTimeout(r, 1));
      if (failures > 0) {
        failures--;
        throw new Error('build failed');
      }
      const n = Math.max(0, Math.min(count, capacity - next));
      return Array.from(
        { length: n },
        () => new SlotResource(next++, DENY_ALL_EGRESS_POLICY, true),
      );
    },
  };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(cond(), 'condition not reached');
}

describe('SlotPool', () => {
  it('fills to high in batches once below low, and refills as slots are taken', async () => {
    const b = standInBuilder();
    const pool = new SlotPool({
      low: 2,
      high: 5,
      batchSize: 3,
      build: b.build,
      onError: (e) => assert.fail(String(e)),
    });
    pool.kick();
    await until(() => pool.ready === 5);
    assert.deepEqual(b.calls, [3, 2]);
    for (let i = 0; i < 3; i++) pool.take();
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(b.calls, [3, 2], 'two ready is not below low');
    pool.take();
    await until(() => pool.ready === 5);
    assert.deepEqual(b.calls, [3, 2, 3, 1]);
    assert.equal((await pool.close()).length, 5);
  });

  it('does not refill while at or above low', async () => {
    const b = standInBuilder();
    const pool = new SlotPool({
      low: 1,
      high: 3,
      build: b.build,
      onError: (e) => assert.fail(String(e)),
    });
    pool.kick();
    await until(() => pool.ready === 3);
    pool.take();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(pool.ready, 2);
    assert.deepEqual(b.calls, [3]);
    await pool.close();
  });

  it('takes offered slots back only below high', async () => {
    const pool = new SlotPool({
      low: 0,
      high: 1,
      build: standInBuilder().build,
      onError: (e) => assert.fail(String(e)),
    });
    assert.ok(pool.offer(new SlotResource(7, DENY_ALL_EGRESS_POLICY, true)));
    assert.ok(!pool.offer(new SlotResource(8, DENY_ALL_EGRESS_POLICY, true)));
    assert.equal(pool.take()?.index, 7);
    assert.equal(pool.take(), undefined);
    await pool.close();
    assert.ok(!pool.offer(new SlotResource(9, DENY_ALL_EGRESS_POLICY, true)));
  });

  it('reports a failed batch and retries with backoff', async () => {
    const b = standInBuilder();
    b.failNext(2);
    const errors: unknown[] = [];
    const pool = new SlotPool({
      low: 1,
      high: 2,
      retryMs: 5,
      build: b.build,
      onError: (e) => errors.push(e),
    });
    pool.kick();
    await until(() => pool.ready === 2);
    assert.equal(errors.length, 2);
    assert.deepEqual(b.calls, [2, 2, 2]);
    await pool.close();
  });

  it('stops when capacity runs out, and close interrupts a backoff', async () => {
    const b = standInBuilder(1);
    const pool = new SlotPool({
      low: 3,
      high: 3,
      build: b.build,
      onError: (e) => assert.fail(String(e)),
    });
    pool.kick();
    await until(() => b.calls.length === 1);
    await until(() => pool.ready === 1);
    assert.equal(pool.building, 0);
    const failing = standInBuilder();
    failing.failNext(100);
    const p2 = new SlotPool({
      low: 1,
      high: 1,
      retryMs: 60_000,
      build: failing.build,
      onError: () => undefined,
    });
    p2.kick();
    await until(() => failing.calls.length === 1);
    const t0 = Date.now();
    await p2.close();
    assert.ok(Date.now() - t0 < 1000);
    await pool.close();
  });
});
