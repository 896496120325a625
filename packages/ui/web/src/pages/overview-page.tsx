/**
 * The overview: every node with its capacity and usage bars, sandboxes by
 * state, and the last hour of creates per second and create and resume
 * latency (p50, p99) from the host's own metrics.
 *
 * @module
 */
import { LineChart } from '../components/line-chart.js';
import { UsageBar } from '../components/usage-bar.js';
import { latency, mib } from '../format.js';
import type { LiveState } from '../live.js';
import type { NodeView } from '../types.js';

/** Capacity and usage of one node. */
export function NodeCard({ node }: { node: NodeView }) {
  const c = node.capacity;
  const u = node.usage;
  return (
    <div className="card node-card" data-testid="node-card">
      <div className="card-title">
        <strong>{node.nodeID}</strong>
        <span className={`badge state-${node.status}`}>{node.status}</span>
      </div>
      <div className="muted">
        {node.driver}/{node.mode} · v{node.version}
      </div>
      <UsageBar label="Sandbox slots" used={u.running} total={c.slots} />
      <UsageBar label="vCPUs" used={u.vcpus} total={c.vcpus} />
      <UsageBar label="Memory" used={u.memoryMiB} total={c.memoryMiB} format={mib} />
      <UsageBar label="Disk" used={c.diskMiB - u.diskFreeMiB} total={c.diskMiB} format={mib} />
    </div>
  );
}

function StateCounts({ live }: { live: LiveState }) {
  const running = live.sandboxes.filter((s) => s.state === 'running').length;
  const paused = live.sandboxes.length - running;
  const total = Math.max(1, live.sandboxes.length);
  return (
    <div className="card" data-testid="state-counts">
      <div className="card-title">
        <strong>Sandboxes by state</strong>
      </div>
      <div className="counts">
        <div>
          <span className="big" data-testid="count-running">
            {running}
          </span>
          running
        </div>
        <div>
          <span className="big" data-testid="count-paused">
            {paused}
          </span>
          paused
        </div>
      </div>
      <div className="stack-bar">
        <div className="state-running" style={{ width: `${(running / total) * 100}%` }} />
        <div className="state-paused" style={{ width: `${(paused / total) * 100}%` }} />
      </div>
    </div>
  );
}

/** The overview page. */
export function OverviewPage({ live }: { live: LiveState }) {
  const h = live.history;
  const times = h.map((p) => p.t);
  const rate = (v: number | null): string => (v === null ? '—' : `${v.toFixed(2)}/s`);
  const count = (v: number | null): string => (v === null ? '—' : String(Math.round(v)));
  return (
    <div className="page">
      <h2>Overview</h2>
      <div className="grid">
        <StateCounts live={live} />
        {live.nodes.map((n) => (
          <NodeCard key={n.nodeID} node={n} />
        ))}
      </div>
      <h3>Last hour</h3>
      {live.historyIntervalMs === null && (
        <p className="muted">This host keeps no metrics history.</p>
      )}
      <div className="charts">
        <LineChart
          title="Creates per second"
          testId="chart-creates"
          times={times}
          format={rate}
          series={[
            { name: 'creates', color: '#3b82f6', values: h.map((p) => p.createsPerSec) },
            { name: 'resumes', color: '#10b981', values: h.map((p) => p.resumesPerSec) },
          ]}
        />
        <LineChart
          title="Create latency"
          testId="chart-create-latency"
          times={times}
          format={latency}
          series={[
            { name: 'p50', color: '#3b82f6', values: h.map((p) => p.createP50Ms) },
            { name: 'p99', color: '#ef4444', values: h.map((p) => p.createP99Ms) },
          ]}
        />
        <LineChart
          title="Resume latency"
          testId="chart-resume-latency"
          times={times}
          format={latency}
          series={[
            { name: 'p50', color: '#10b981', values: h.map((p) => p.resumeP50Ms) },
            { name: 'p99', color: '#f59e0b', values: h.map((p) => p.resumeP99Ms) },
          ]}
        />
        <LineChart
          title="Sandboxes"
          testId="chart-sandboxes"
          times={times}
          format={count}
          series={[
            { name: 'running', color: '#3b82f6', values: h.map((p) => p.running) },
            { name: 'paused', color: '#a855f7', values: h.map((p) => p.paused) },
          ]}
        />
      </div>
    </div>
  );
}
