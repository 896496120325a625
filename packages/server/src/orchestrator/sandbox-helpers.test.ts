// settle: forks and batch creates start their machines at most `limit` at a
// time, each result in its place, failures as errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';
import { settle } from './sandbox-helpers.js';
import type { SandboxRecord } from './sandbox.js';

describe('settle', () => {
  it('starts at most `limit` at once and keeps the order of results', async () => {
    let running = 0;
    let most = 0;
    let n = 0;
    const results = await settle(
      10,
      async () => {
        const i = n++;
        running++;
        most = Math.max(most, running);
        await sleep(5 + (i % 3));
        running--;
        if (i === 4) throw new Error('boom');
        return { id: `s${i}` } as SandboxRecord;
      },
      3,
    );
    assert.equal(most, 3);
    assert.equal(results.length, 10);
    assert.deepEqual(
      results.map((r) => (r instanceof AenvError ? r.code : r.id)),
      ['s0', 's1', 's2', 's3', 'SBX_START_FAILED', 's5', 's6', 's7', 's8', 's9'],
    );
  });

  it('runs all at once without a limit', async () => {
    let running = 0;
    let most = 0;
    await settle(6, async () => {
      running++;
      most = Math.max(most, running);
      await sleep(5);
      running--;
      return { id: 'x' } as SandboxRecord;
    });
    assert.equal(most, 6);
  });
});
