import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RwGate } from './rw-gate.js';

describe('RwGate', () => {
  it('lets shared holders overlap and runs an exclusive holder alone', async () => {
    const gate = new RwGate();
    const log: string[] = [];
    const shared = (n: string) =>
      gate.shared(async () => {
        log.push(`${n}+`);
        await sleep(10);
        log.push(`${n}-`);
      });
    await Promise.all([
      shared('r1'),
      shared('r2'),
      gate.exclusive(async () => {
        log.push('x+');
        await sleep(1);
        log.push('x-');
      }),
      shared('r3'),
    ]);
    assert.deepEqual(log.slice(0, 2), ['r1+', 'r2+']);
    const x = log.indexOf('x+');
    assert.equal(log[x + 1], 'x-', 'nothing runs during the exclusive section');
    assert.ok(log.indexOf('r3+') > x, 'a later shared request waits behind the exclusive one');
  });

  it('releases on failure', async () => {
    const gate = new RwGate();
    await assert.rejects(
      gate.exclusive(() => Promise.reject(new Error('no'))),
      /no/,
    );
    assert.equal(await gate.shared(() => Promise.resolve(1)), 1);
  });
});
