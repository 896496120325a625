/**
 * Tests of the start gate: the limit holds, order is kept, a failure
 * passes the turn on.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StartGate } from './start-gate.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('StartGate', () => {
  it('admits at most `limit` starts at once, in arrival order, and passes turns on failure', async () => {
    const gate = new StartGate(2);
    const order: number[] = [];
    let inside = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const runs = [0, 1, 2, 3, 4].map((i) =>
      gate.run(async () => {
        order.push(i);
        inside++;
        most = Math.max(most, inside);
        await new Promise<void>((r) => release.push(r));
        inside--;
        if (i === 1) throw new Error('start 1 failed');
        return i;
      }),
    );
    const settled = Promise.allSettled(runs);
    await tick();
    assert.deepEqual(gate.load, { running: 2, waiting: 3 });
    while (release.length > 0 || order.length < 5) {
      release.shift()?.();
      await tick();
    }
    const results = await settled;
    assert.equal(most, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
    assert.equal(results[1]?.status, 'rejected');
    assert.deepEqual(
      results.filter((r) => r.status === 'fulfilled').map((r) => r.value),
      [0, 2, 3, 4],
    );
    assert.deepEqual(gate.load, { running: 0, waiting: 0 });
  });
});
