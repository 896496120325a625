/**
 * Unit tests for {@link pumpEvents} and {@link keepaliveInterval}.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventQueue } from './event-queue.js';
import { DEFAULT_KEEPALIVE_MS, keepaliveInterval, pumpEvents } from './keepalive-pump.js';

describe('keepaliveInterval', () => {
  it('reads seconds from Keepalive-Ping-Interval, else 90 s', () => {
    assert.equal(keepaliveInterval(new Headers({ 'keepalive-ping-interval': '50' })), 50_000);
    assert.equal(keepaliveInterval(new Headers()), DEFAULT_KEEPALIVE_MS);
    assert.equal(
      keepaliveInterval(new Headers({ 'keepalive-ping-interval': 'x' })),
      DEFAULT_KEEPALIVE_MS,
    );
  });
});

describe('pumpEvents', () => {
  it('yields items, keepalives while idle, and stops after the last item', async () => {
    const queue = new EventQueue<number>();
    const out: string[] = [];
    setTimeout(() => queue.push(1), 5);
    setTimeout(() => queue.push(2), 130);
    for await (const m of pumpEvents(queue, {
      signal: new AbortController().signal,
      intervalMs: 50,
      keepalive: () => 'ka',
      toMessage: (n) => `n${n}`,
      isLast: (n) => n === 2,
    })) {
      out.push(m);
    }
    assert.equal(out[0], 'n1');
    assert.equal(out.at(-1), 'n2');
    assert.ok(out.filter((m) => m === 'ka').length >= 1);
    assert.equal(queue.closed, true);
  });

  it('throws the abort reason, even when the abort also closed the queue', async () => {
    const queue = new EventQueue<number>();
    const ac = new AbortController();
    ac.signal.addEventListener('abort', () => queue.close());
    setTimeout(() => ac.abort(new Error('deadline')), 10);
    await assert.rejects(async () => {
      for await (const _ of pumpEvents(queue, {
        signal: ac.signal,
        intervalMs: 1000,
        keepalive: () => 0,
        toMessage: (n) => n,
      })) {
        // nothing arrives
      }
    }, /deadline/);
  });
});
