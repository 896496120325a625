/**
 * The sandbox list, live: filter by state, template, metadata
 * (`key=value, …`) and id; each row links to the sandbox's page.
 *
 * @module
 */
import { useMemo, useState } from 'react';
import {
  filterSandboxes,
  NO_FILTER,
  type SandboxFilter,
} from '../../../src/model/sandbox-filter.js';
import { StateBadge } from '../components/state-badge.js';
import { mib, relative } from '../format.js';
import type { LiveState } from '../live.js';
import { href } from '../router.js';

function FilterBar({
  filter,
  setFilter,
  templates,
}: {
  filter: SandboxFilter;
  setFilter: (f: SandboxFilter) => void;
  templates: readonly string[];
}) {
  return (
    <div className="filters">
      <select
        value={filter.state}
        onChange={(e) => setFilter({ ...filter, state: e.target.value })}
        data-testid="filter-state"
      >
        <option value="all">all states</option>
        <option value="running">running</option>
        <option value="paused">paused</option>
      </select>
      <select
        value={filter.template}
        onChange={(e) => setFilter({ ...filter, template: e.target.value })}
        data-testid="filter-template"
      >
        <option value="">all templates</option>
        {templates.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <input
        placeholder="metadata: key=value, …"
        value={filter.metadata}
        onChange={(e) => setFilter({ ...filter, metadata: e.target.value })}
        data-testid="filter-metadata"
      />
      <input
        placeholder="sandbox id"
        value={filter.text}
        onChange={(e) => setFilter({ ...filter, text: e.target.value })}
        data-testid="filter-text"
      />
    </div>
  );
}

/** The list page. */
export function SandboxesPage({ live }: { live: LiveState }) {
  const [filter, setFilter] = useState<SandboxFilter>(NO_FILTER);
  const shown = useMemo(() => filterSandboxes(live.sandboxes, filter), [live.sandboxes, filter]);
  const templates = useMemo(
    () => [...new Set(live.sandboxes.map((s) => s.templateID))].sort(),
    [live.sandboxes],
  );
  return (
    <div className="page">
      <h2>
        Sandboxes{' '}
        <span className="muted">
          {shown.length} of {live.sandboxes.length}
        </span>
      </h2>
      <FilterBar filter={filter} setFilter={setFilter} templates={templates} />
      <table className="table" data-testid="sandbox-table">
        <thead>
          <tr>
            <th>Sandbox</th>
            <th>State</th>
            <th>Template</th>
            <th>Started</th>
            <th>Ends</th>
            <th>Shape</th>
            <th>Metadata</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((s) => (
            <tr key={s.sandboxID} data-testid="sandbox-row" data-sandbox-id={s.sandboxID}>
              <td>
                <a href={href('sandboxes', s.sandboxID)} className="mono">
                  {s.sandboxID}
                </a>
                {s.parentSandboxID !== undefined && <span className="muted"> ⑂ fork</span>}
              </td>
              <td>
                <StateBadge state={s.state} />
              </td>
              <td>{s.alias ?? s.templateID}</td>
              <td>{relative(s.startedAt)}</td>
              <td>{s.state === 'running' ? relative(s.endAt) : '—'}</td>
              <td>
                {s.cpuCount} vCPU · {mib(s.memoryMB)}
              </td>
              <td>
                {Object.entries(s.metadata).map(([k, v]) => (
                  <span key={k} className="chip">
                    {k}={v}
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {live.loaded && shown.length === 0 && <p className="muted">No sandbox matches.</p>}
      {!live.loaded && <p className="muted">Loading…</p>}
    </div>
  );
}
