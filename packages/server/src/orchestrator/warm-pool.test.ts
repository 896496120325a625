import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WarmPool, type WarmPoolOptions } from './warm-pool.js';

/** Items are numbers; the ledger records what was made and destroyed. */
function ledger(overrides: Partial<WarmPoolOptions<number>> = {}) {
  const made: number[] = [];
  const destroyed: number[] = [];
  const errors: unknown[] = [];
  const lost = new Map<number, () => void>();
  let next = 0;
  const pool = new WarmPool<number>({
    low: 1,
    high: 3,
    make: async () => {
      await sleep(5);
      made.push(++next);
      return next;
    },
    destroy: (n) => Promise.resolve(void destroyed.push(n)),
    lost: (n) => new Promise((resolve) => lost.set(n, resolve)),
    onError: (err) => void errors.push(err),
    ...overrides,
  });
  return { pool, made, destroyed, errors, lost };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await sleep(5);
  assert.ok(cond(), what);
}

describe('WarmPool', () => {
  it('fills to the high watermark, and refills only below the low one', async () => {
    const { pool, made } = ledger();
    pool.kick();
    await until(() => pool.ready === 3, 'filled to high');
    assert.equal(pool.take(), 1, 'oldest first');
    assert.equal(pool.take(), 2);
    await sleep(30);
    assert.equal(made.length, 3, 'one left (= low): no refill yet');
    assert.equal(pool.take(), 3);
    await until(() => pool.ready === 3, 'refilled to high once empty');
    assert.deepEqual(made, [1, 2, 3, 4, 5, 6]);
    await pool.close();
  });

  it('stays empty with low 0', async () => {
    const { pool, made } = ledger({ low: 0, high: 2 });
    pool.kick();
    assert.equal(pool.take(), undefined);
    await sleep(30);
    assert.deepEqual(made, []);
  });

  it('destroys and replaces an item lost while it waits', async () => {
    const { pool, destroyed, lost } = ledger({ low: 2, high: 2 });
    pool.kick();
    await until(() => pool.ready === 2, 'filled');
    lost.get(1)?.();
    await until(() => destroyed.includes(1) && pool.ready === 2, 'item 1 replaced');
    assert.equal(pool.take(), 2);
    await pool.close();
  });

  it('backs off after a failed make and reports it', async () => {
    let calls = 0;
    const { pool, errors } = ledger({
      make: () => Promise.reject(new Error(`make ${++calls}`)),
    });
    pool.kick();
    await until(() => errors.length === 1, 'the failure reported');
    pool.kick();
    await sleep(50);
    assert.equal(calls, 1, 'no retry before the back-off ends');
    await pool.close();
  });

  it('drains and closes: ready items destroyed, the one being made aborted', async () => {
    let aborted = false;
    let n = 0;
    const { pool, destroyed } = ledger({
      low: 3,
      high: 3,
      make: (signal) => {
        if (++n <= 2) return Promise.resolve(n);
        return new Promise((_, reject) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason as Error);
          });
        });
      },
    });
    pool.kick();
    await until(() => pool.ready === 2 && pool.building === 1, 'two made, one hanging');
    await pool.close();
    assert.equal(aborted, true);
    assert.deepEqual(destroyed.sort(), [1, 2]);
    assert.equal(pool.ready, 0);
    pool.kick();
    assert.equal(pool.building, 0, 'a closed pool makes nothing');
  });

  it('discards one item without refilling', async () => {
    const { pool, made, destroyed } = ledger({ low: 2, high: 2 });
    pool.kick();
    await until(() => pool.ready === 2, 'filled');
    assert.equal(await pool.discardOne(), true);
    assert.deepEqual(destroyed, [2]);
    await sleep(30);
    assert.equal(made.length, 2);
    await pool.close();
    assert.equal(await pool.discardOne(), false);
  });

  it('refuses a low watermark above the high one', () => {
    assert.throws(() => ledger({ low: 3, high: 1 }), RangeError);
  });
});
