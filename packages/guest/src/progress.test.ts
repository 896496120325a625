import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatProgress, stageProgress, type GuestProgressEvent } from './progress.js';

describe('progress', () => {
  it('binds events to a stage and clamps percents', () => {
    const seen: GuestProgressEvent[] = [];
    const p = stageProgress('kernel', (e) => seen.push(e));
    p({ percent: 140.4, message: 'x' });
    p({ bytes: 10, totalBytes: 20 });
    assert.deepEqual(seen, [
      { stage: 'kernel', status: 'progress', percent: 100, message: 'x' },
      { stage: 'kernel', status: 'progress', bytes: 10, totalBytes: 20 },
    ]);
    stageProgress('kernel', undefined)({ percent: 1 });
  });

  it('formats one line per event', () => {
    assert.equal(
      formatProgress({
        stage: 'base-image',
        status: 'progress',
        percent: 7,
        message: 'debootstrap: Retrieving x',
      }),
      '[base-image] progress   7% debootstrap: Retrieving x',
    );
    assert.equal(
      formatProgress({ stage: 'init', status: 'done', percent: 100, durationMs: 1500 }),
      '[init] done 100% (1.5 s)',
    );
  });
});
