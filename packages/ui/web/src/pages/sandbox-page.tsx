/**
 * One sandbox: its facts, actions, lineage tree (forks and snapshots),
 * resource use (`GET /sandboxes/{id}/metrics`), console log
 * (`GET /sandboxes/{id}/logs`), network policy, and a terminal. State,
 * lineage and the list of relatives come live; metrics and the console
 * are re-read every few seconds while the page is open.
 *
 * @module
 */
import { useEffect, useMemo, useState } from 'react';
import { lineageForest, lineageTreeOf } from '../../../src/model/lineage.js';
import { api, apiText } from '../api.js';
import { LineageTree } from '../components/lineage-tree.js';
import { SandboxActions } from '../components/sandbox-actions.js';
import { StateBadge } from '../components/state-badge.js';
import { TerminalView } from '../components/terminal-view.js';
import { UsageBar } from '../components/usage-bar.js';
import { bytes, mib, relative } from '../format.js';
import type { LiveState } from '../live.js';
import { href } from '../router.js';
import type { SandboxMetric, UiSandbox } from '../types.js';

/** Re-reads `load` every `ms` while mounted; keeps the last good value. */
function usePolled<T>(load: () => Promise<T>, ms: number, deps: readonly unknown[]): T | undefined {
  const [value, setValue] = useState<T | undefined>(undefined);
  useEffect(() => {
    let stop = false;
    const tick = (): void => {
      load().then(
        (v) => !stop && setValue(v),
        () => undefined,
      );
    };
    tick();
    const timer = setInterval(tick, ms);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, deps);
  return value;
}

function Facts({ s }: { s: UiSandbox }) {
  const rows: [string, string][] = [
    ['Template', s.alias ?? s.templateID],
    ['Started', relative(s.startedAt)],
    ['Ends', s.state === 'running' ? relative(s.endAt) : '—'],
    ['Shape', `${s.cpuCount} vCPU · ${mib(s.memoryMB)} · ${mib(s.diskSizeMB)} disk`],
    ['On timeout', s.lifecycle?.onTimeout ?? '—'],
    ['envd', s.envdVersion ?? '—'],
    [
      'Metadata',
      Object.entries(s.metadata)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ') || '—',
    ],
  ];
  return (
    <table className="facts">
      <tbody>
        {rows.map(([k, v]) => (
          <tr key={k}>
            <th>{k}</th>
            <td>{v}</td>
          </tr>
        ))}
        {s.parentSandboxID !== undefined && (
          <tr>
            <th>Forked from</th>
            <td>
              <a href={href('sandboxes', s.parentSandboxID)} className="mono">
                {s.parentSandboxID}
              </a>
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

function Resources({ s }: { s: UiSandbox }) {
  const id = s.sandboxID;
  const metrics = usePolled(
    () => api<SandboxMetric[]>('GET', `/sandboxes/${encodeURIComponent(id)}/metrics`),
    5000,
    [id],
  );
  const m = metrics?.at(-1);
  if (m === undefined) return <p className="muted">No samples yet.</p>;
  return (
    <div data-testid="resources">
      <UsageBar label="CPU %" used={Math.round(m.cpuUsedPct)} total={100} />
      <UsageBar label="Memory" used={m.memUsed} total={m.memTotal} format={bytes} />
      <UsageBar label="Disk" used={m.diskUsed} total={m.diskTotal} format={bytes} />
    </div>
  );
}

function ConsoleLog({ id }: { id: string }) {
  const text = usePolled(
    () => apiText(`/sandboxes/${encodeURIComponent(id)}/logs?lines=200`),
    5000,
    [id],
  );
  return (
    <pre className="console" data-testid="console-log">
      {text === undefined || text === '' ? '(empty)' : text}
    </pre>
  );
}

function TerminalSection({ s }: { s: UiSandbox }) {
  const [open, setOpen] = useState(false);
  if (s.state !== 'running') return <p className="muted">Resume the sandbox to open a terminal.</p>;
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)} data-testid="open-terminal">
        Open terminal
      </button>
    );
  }
  return <TerminalView key={s.sandboxID} sandboxId={s.sandboxID} />;
}

/** The sandbox page. */
export function SandboxPage({ id, live }: { id: string; live: LiveState }) {
  const s = live.sandboxes.find((x) => x.sandboxID === id);
  const tree = useMemo(
    () => lineageTreeOf(lineageForest(live.sandboxes, live.snapshots), `sandbox:${id}`),
    [live.sandboxes, live.snapshots, id],
  );
  if (s === undefined) {
    return (
      <div className="page">
        <h2 className="mono">{id}</h2>
        <p className="muted" data-testid="sandbox-gone">
          {live.loaded ? 'This sandbox is not running or paused (killed, or unknown).' : 'Loading…'}
        </p>
        <a href={href('sandboxes')}>All sandboxes</a>
      </div>
    );
  }
  return (
    <div className="page" data-testid="sandbox-page">
      <h2>
        <span className="mono">{s.sandboxID}</span> <StateBadge state={s.state} />
      </h2>
      <SandboxActions sandbox={s} />
      <div className="grid">
        <section className="card">
          <h3>Details</h3>
          <Facts s={s} />
        </section>
        <section className="card">
          <h3>Lineage</h3>
          {tree === undefined ? (
            <p className="muted">—</p>
          ) : (
            <LineageTree root={tree} current={`sandbox:${id}`} />
          )}
        </section>
        <section className="card">
          <h3>Resource use</h3>
          {s.state === 'running' ? (
            <Resources s={s} />
          ) : (
            <p className="muted">Paused: no machine.</p>
          )}
        </section>
        <section className="card">
          <h3>Network policy</h3>
          <pre className="json" data-testid="network-policy">
            {JSON.stringify(s.network ?? {}, null, 2)}
          </pre>
        </section>
      </div>
      <h3>Terminal</h3>
      <TerminalSection s={s} />
      <h3>Console log</h3>
      <ConsoleLog id={s.sandboxID} />
    </div>
  );
}
