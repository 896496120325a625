/**
 * Tests of reading the node's stage metrics out of its Prometheus text.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStageMetrics, stageMetricsDelta } from './stage-metrics.mjs';

const TEXT = `# HELP aenv_sandbox_operation_seconds Latency
# TYPE aenv_sandbox_operation_seconds histogram
aenv_sandbox_operation_seconds_bucket{op="create",stage="total",le="0.5"} 1
aenv_sandbox_operation_seconds_sum{op="create",stage="total"} 1.5
aenv_sandbox_operation_seconds_count{op="create",stage="total"} 2
aenv_sandbox_operation_seconds_sum{op="create",stage="envdInit"} 0.4
aenv_sandbox_operation_seconds_count{op="create",stage="envdInit"} 2
aenv_sandbox_operation_seconds_sum{op="pause",stage="total"} 0.1
aenv_sandbox_operation_seconds_count{op="pause",stage="total"} 1
aenv_sandbox_operations_total{op="create",result="ok"} 2
`;

describe('parseStageMetrics', () => {
  it('gives count and mean (ms) per operation and stage', () => {
    const m = parseStageMetrics(TEXT);
    assert.deepEqual(Object.keys(m).sort(), ['create', 'pause']);
    assert.equal(m.create.total.count, 2);
    assert.equal(m.create.total.meanMs, 750);
    assert.equal(m.create.envdInit.meanMs, 200);
    assert.equal(m.pause.total.meanMs, 100);
  });

  it('ignores other metrics and text', () => {
    assert.deepEqual(parseStageMetrics('aenv_sandboxes{state="running"} 3\nnonsense'), {});
  });
});

describe('stageMetricsDelta', () => {
  it('keeps only what happened between two readings', () => {
    const before = parseStageMetrics(TEXT);
    const after = parseStageMetrics(
      TEXT.replace(
        '_sum{op="create",stage="total"} 1.5',
        '_sum{op="create",stage="total"} 2.5',
      ).replace('_count{op="create",stage="total"} 2', '_count{op="create",stage="total"} 3'),
    );
    const d = stageMetricsDelta(before, after);
    assert.deepEqual(Object.keys(d), ['create']);
    assert.equal(d.create.total.count, 1);
    assert.ok(Math.abs(d.create.total.meanMs - 1000) < 1e-6);
  });
});
