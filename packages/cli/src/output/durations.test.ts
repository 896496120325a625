import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDuration, relativeTime, shortDuration } from './durations.js';

describe('durations', () => {
  it('parses seconds, units and sums of units', () => {
    assert.equal(parseDuration('300', 't'), 300_000);
    assert.equal(parseDuration('90s', 't'), 90_000);
    assert.equal(parseDuration('5m', 't'), 300_000);
    assert.equal(parseDuration('1h30m', 't'), 5_400_000);
    assert.equal(parseDuration('250ms', 't'), 250);
    for (const bad of ['', '5x', 'm', '1h 2m', '-5']) {
      assert.throws(() => parseDuration(bad, 'timeout'), /--timeout: .* is not a duration/);
    }
  });

  it('formats relative times with the largest whole unit', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(relativeTime(new Date('2026-01-01T00:04:59Z'), now), 'in 4m');
    assert.equal(relativeTime(new Date('2025-12-31T23:59:18Z'), now), '42s ago');
    assert.equal(shortDuration(3 * 86_400_000), '3d');
    assert.equal(shortDuration(7_200_000), '2h');
  });
});
