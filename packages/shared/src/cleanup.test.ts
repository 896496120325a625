import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { AenvError } from './aenv-error.js';
import { Cleanup } from './cleanup.js';

describe('Cleanup', () => {
  it('runs steps last-in first-out, awaiting each', async () => {
    const order: string[] = [];
    const cleanup = new Cleanup();
    cleanup.add('slot', () => void order.push('slot'));
    cleanup.add('tap', async () => {
      await tick();
      order.push('tap');
    });
    cleanup.add('vm', () => void order.push('vm'));
    assert.equal(cleanup.size, 3);
    await cleanup.run();
    assert.deepEqual(order, ['vm', 'tap', 'slot']);
    assert.equal(cleanup.size, 0);
  });

  it('runs once even when run() is called again or concurrently', async () => {
    let count = 0;
    const cleanup = new Cleanup();
    cleanup.add('once', async () => {
      await tick();
      count++;
    });
    const first = cleanup.run();
    const second = cleanup.run();
    assert.equal(first, second);
    await Promise.all([first, second]);
    await cleanup.run();
    assert.equal(count, 1);
  });

  it('runs every step despite failures and aggregates them', async () => {
    const ran: string[] = [];
    const cleanup = new Cleanup();
    cleanup.add('a', () => void ran.push('a'));
    cleanup.add('b', () => {
      throw new Error('b failed');
    });
    cleanup.add('c', () => Promise.reject(new Error('c failed')));
    const err = await cleanup.run().then(
      () => assert.fail('should reject'),
      (e: unknown) => e,
    );
    assert.deepEqual(ran, ['a']);
    assert.ok(err instanceof AenvError);
    assert.equal(err.code, 'CLEANUP_FAILED');
    assert.match(err.message, /c, b/);
    assert.ok(err.cause instanceof AggregateError);
    assert.deepEqual(
      err.cause.errors.map((e: Error) => e.message),
      ['c failed', 'b failed'],
    );
  });

  it('runs late additions immediately and reports their failures', async () => {
    const late: string[] = [];
    const errors: string[] = [];
    const cleanup = new Cleanup({ onLateError: (_err, label) => errors.push(label) });
    await cleanup.run();
    cleanup.add('late-ok', () => void late.push('ok'));
    cleanup.add('late-bad', () => {
      throw new Error('nope');
    });
    await tick();
    await tick();
    assert.deepEqual(late, ['ok']);
    assert.deepEqual(errors, ['late-bad']);
    assert.equal(cleanup.size, 0);
  });

  it('runs a step added while run() is in progress', async () => {
    const order: string[] = [];
    const cleanup = new Cleanup();
    cleanup.add('first', async () => {
      cleanup.add('added-during-run', () => void order.push('late'));
      await tick();
      order.push('first');
    });
    await cleanup.run();
    await tick();
    assert.deepEqual(order.sort(), ['first', 'late']);
  });

  it('works with await using and move() transfers ownership', async () => {
    const ran: string[] = [];
    let kept: Cleanup | undefined;
    {
      await using cleanup = new Cleanup();
      cleanup.add('resource', () => void ran.push('resource'));
      kept = cleanup.move();
    }
    assert.equal(ran.length, 0);
    assert.equal(kept.size, 1);
    {
      await using failing = new Cleanup();
      failing.add('other', () => void ran.push('other'));
    }
    assert.deepEqual(ran, ['other']);
    await kept.run();
    assert.deepEqual(ran, ['other', 'resource']);
  });
});
