import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { histogramQuantile } from './histogram-quantile.js';
import { MetricsHistory } from './metrics-history.js';

/** A node's metrics text with `n` creates of which half took <= 0.1 s and half <= 1 s. */
function text(creates: number, failures: number, running: number): string {
  const half = creates / 2;
  return [
    '# TYPE aenv_sandbox_operation_seconds histogram',
    `aenv_sandbox_operation_seconds_bucket{op="create",stage="total",le="0.1"} ${half}`,
    `aenv_sandbox_operation_seconds_bucket{op="create",stage="total",le="1"} ${creates}`,
    `aenv_sandbox_operation_seconds_bucket{op="create",stage="total",le="+Inf"} ${creates}`,
    `aenv_sandbox_operation_seconds_bucket{op="create",stage="boot",le="+Inf"} 999`,
    `aenv_sandbox_operations_total{op="create",result="ok"} ${creates}`,
    `aenv_sandbox_operations_total{op="create",result="SANDBOX_START_FAILED"} ${failures}`,
    `aenv_sandboxes{state="running"} ${running}`,
    `aenv_sandboxes{state="paused"} 1`,
  ].join('\n');
}

describe('MetricsHistory', () => {
  it('turns the difference of two reads into rates, quantiles and counts', async () => {
    let now = 0;
    let current = text(10, 0, 2);
    const h = new MetricsHistory({ source: () => current, now: () => now, windowMs: 60_000 });
    assert.equal(await h.sample(), undefined, 'the first read is the baseline');
    now = 5000;
    current = text(20, 3, 4);
    const p = await h.sample();
    assert.ok(p !== undefined);
    assert.equal(p.createsPerSec, 2);
    assert.equal(p.createP50Ms, 100);
    assert.ok(p.createP99Ms !== null && p.createP99Ms > 900 && p.createP99Ms <= 1000);
    assert.equal(p.resumeP50Ms, null);
    assert.equal(p.failures, 3);
    assert.equal(p.running, 4);
    assert.equal(p.paused, 1);
  });

  it('keeps only the window, notifies subscribers and skips failed reads', async () => {
    let now = 0;
    let fail = false;
    const h = new MetricsHistory({
      source: () => {
        if (fail) throw new Error('down');
        return [text(0, 0, 0), text(0, 0, 1)];
      },
      now: () => now,
      windowMs: 10_000,
    });
    const seen: number[] = [];
    h.subscribe((p) => seen.push(p.t));
    for (now = 0; now <= 30_000; now += 5000) await h.sample();
    fail = true;
    now += 5000;
    assert.equal(await h.sample(), undefined);
    assert.deepEqual(
      h.points().map((p) => p.t),
      [20_000, 25_000, 30_000],
    );
    assert.equal(seen.length, 6);
    assert.equal(h.points()[0]?.running, 1, 'texts of several nodes are summed');
  });
});

describe('histogramQuantile', () => {
  it('interpolates inside the bucket like Prometheus', () => {
    const b = [
      { le: 1, count: 0 },
      { le: 2, count: 10 },
      { le: Infinity, count: 10 },
    ];
    assert.equal(histogramQuantile(0.5, b), 1.5);
    assert.equal(histogramQuantile(0.5, [{ le: Infinity, count: 0 }]), null);
  });
});
