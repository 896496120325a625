import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { OperationQueue } from './operation-queue.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('OperationQueue', () => {
  it('runs one operation at a time, in order', async () => {
    const q = new OperationQueue();
    const log: string[] = [];
    let running = 0;
    const op = (name: string) => async () => {
      running++;
      assert.equal(running, 1, 'two operations overlapped');
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all([q.run(op('a')), q.run(op('b')), q.run(op('c'))]);
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.equal(q.length, 0);
  });

  it('lets a kill wait for the running operation, then go before queued ones', async () => {
    const q = new OperationQueue();
    const gate = deferred();
    const log: string[] = [];
    const pause = q.run(async () => {
      log.push('pause');
      await gate.promise;
    });
    const resume = q.run(() => Promise.resolve(void log.push('resume')));
    const kill = q.runFirst(() => Promise.resolve(void log.push('kill')));
    await tick();
    assert.deepEqual(log, ['pause'], 'nothing runs while pause is in progress');
    gate.resolve();
    await Promise.all([pause, resume, kill]);
    assert.deepEqual(log, ['pause', 'kill', 'resume']);
  });

  it('keeps going after a failed operation and reports its error to its caller only', async () => {
    const q = new OperationQueue();
    const failed = q.run(() => Promise.reject(new Error('boom')));
    const next = q.run(() => Promise.resolve('ok'));
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'ok');
  });
});
