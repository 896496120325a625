/**
 * Templates and snapshots: each template's shape, build state and which
 * nodes hold it (from `GET /nodes`); each snapshot's source sandbox,
 * template and layers (its lineage: the snapshots it was built on, oldest
 * first). Snapshots can be deleted (with confirmation).
 *
 * @module
 */
import { useState } from 'react';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { mib, relative } from '../format.js';
import type { LiveState } from '../live.js';
import { href } from '../router.js';
import type { UiSnapshot } from '../types.js';

function Templates({ live }: { live: LiveState }) {
  return (
    <table className="table" data-testid="template-table">
      <thead>
        <tr>
          <th>Template</th>
          <th>Aliases</th>
          <th>Shape</th>
          <th>Disk</th>
          <th>Build</th>
          <th>Created</th>
          <th>Cached on</th>
        </tr>
      </thead>
      <tbody>
        {live.templates.map((t) => {
          const on = live.nodes.filter((n) => n.templates.includes(t.templateID));
          return (
            <tr key={t.templateID} data-testid="template-row">
              <td className="mono">{t.templateID}</td>
              <td>{t.aliases.join(', ') || '—'}</td>
              <td>
                {t.cpuCount} vCPU · {mib(t.memoryMB)}
              </td>
              <td>{mib(t.diskSizeMB)}</td>
              <td>{t.buildStatus}</td>
              <td>{relative(t.createdAt)}</td>
              <td>{on.map((n) => n.nodeID).join(', ') || '—'}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Snapshots({ live }: { live: LiveState }) {
  const [deleting, setDeleting] = useState<UiSnapshot | undefined>(undefined);
  return (
    <>
      <table className="table" data-testid="snapshot-table">
        <thead>
          <tr>
            <th>Snapshot</th>
            <th>Names</th>
            <th>From sandbox</th>
            <th>Template</th>
            <th>Layers</th>
            <th>Created</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {live.snapshots.map((s) => (
            <tr key={s.snapshotID} data-testid="snapshot-row">
              <td className="mono">{s.snapshotID}</td>
              <td>{s.names.join(', ') || '—'}</td>
              <td>
                {s.sandboxID === undefined ? (
                  '—'
                ) : (
                  <a href={href('sandboxes', s.sandboxID)} className="mono">
                    {s.sandboxID}
                  </a>
                )}
              </td>
              <td>{s.templateID}</td>
              <td title={s.lineage.join(' → ')}>{s.lineage.length}</td>
              <td>{relative(s.createdAt)}</td>
              <td>
                <button type="button" className="danger small" onClick={() => setDeleting(s)}>
                  delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {live.snapshots.length === 0 && <p className="muted">No snapshots.</p>}
      {deleting !== undefined && (
        <ConfirmDialog
          title={`delete snapshot ${deleting.snapshotID}`}
          confirmLabel="delete"
          danger
          onConfirm={() => api('DELETE', `/snapshots/${encodeURIComponent(deleting.snapshotID)}`)}
          onClose={() => setDeleting(undefined)}
        >
          <p>Sandboxes can no longer start from it. Running sandboxes are not affected.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** The templates and snapshots page. */
export function TemplatesPage({ live }: { live: LiveState }) {
  return (
    <div className="page">
      <h2>Templates</h2>
      <Templates live={live} />
      <h2>Snapshots</h2>
      <Snapshots live={live} />
    </div>
  );
}
