import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from './metrics-registry.js';

describe('MetricsRegistry', () => {
  it('renders counters, gauges and histograms in the Prometheus text format', () => {
    const r = new MetricsRegistry();
    const c = r.counter('aenv_requests_total', 'Requests.');
    c.inc({ route: '/x' });
    c.inc({ route: '/x' }, 2);
    const g = r.gauge('aenv_sandboxes', 'Sandboxes by state.', (set) => {
      set({ state: 'running' }, 3);
      set({ state: 'paused' }, 1);
    });
    assert.ok(g);
    const h = r.histogram('aenv_op_seconds', 'Latency.', [0.1, 1]);
    h.observe({ op: 'create', stage: 'total' }, 0.05);
    h.observe({ op: 'create', stage: 'total' }, 0.5);
    h.observe({ op: 'create', stage: 'total' }, 5);
    const text = r.render();
    assert.match(
      text,
      /# TYPE aenv_requests_total counter\naenv_requests_total\{route="\/x"\} 3\n/,
    );
    assert.match(text, /aenv_sandboxes\{state="running"\} 3\naenv_sandboxes\{state="paused"\} 1/);
    assert.match(text, /aenv_op_seconds_bucket\{op="create",stage="total",le="0.1"\} 1/);
    assert.match(text, /aenv_op_seconds_bucket\{op="create",stage="total",le="1"\} 2/);
    assert.match(text, /aenv_op_seconds_bucket\{op="create",stage="total",le="\+Inf"\} 3/);
    assert.match(text, /aenv_op_seconds_sum\{op="create",stage="total"\} 5.55/);
    assert.match(text, /aenv_op_seconds_count\{op="create",stage="total"\} 3/);
  });

  it('escapes label values and refuses duplicate names', () => {
    const r = new MetricsRegistry();
    r.counter('x_total', 'x').inc({ path: 'a"b\\c\nd' });
    assert.match(r.render(), /x_total\{path="a\\"b\\\\c\\nd"\} 1/);
    assert.throws(() => r.counter('x_total', 'again'), /twice/);
  });
});
