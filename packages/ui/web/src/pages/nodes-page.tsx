/**
 * Nodes: each node's capacity and use (slots, vCPUs, memory, disk, which
 * is where templates and layers are cached), the templates it holds, and —
 * through a gateway — drain / undrain (`POST /nodes/{id}` `{status}`), with
 * confirmation. A single node cannot be drained: it is the whole fleet.
 *
 * @module
 */
import { useState } from 'react';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { relative } from '../format.js';
import type { LiveState } from '../live.js';
import type { NodeView } from '../types.js';
import { NodeCard } from './overview-page.js';

function DrainButton({ node }: { node: NodeView }) {
  const [open, setOpen] = useState(false);
  const next = node.status === 'draining' ? 'ready' : 'draining';
  return (
    <>
      <button type="button" onClick={() => setOpen(true)} data-testid="node-drain">
        {next === 'draining' ? 'drain' : 'undrain'}
      </button>
      {open && (
        <ConfirmDialog
          title={`${next === 'draining' ? 'Drain' : 'Undrain'} ${node.nodeID}`}
          confirmLabel={next === 'draining' ? 'drain' : 'undrain'}
          danger={next === 'draining'}
          onConfirm={() =>
            api('POST', `/nodes/${encodeURIComponent(node.nodeID)}`, { status: next })
          }
          onClose={() => setOpen(false)}
        >
          <p>
            {next === 'draining'
              ? 'A draining node gets no new sandboxes; its sandboxes keep running.'
              : 'The node takes new sandboxes again.'}
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** The nodes page. */
export function NodesPage({ live, kind }: { live: LiveState; kind: 'node' | 'gateway' }) {
  return (
    <div className="page">
      <h2>Nodes</h2>
      <div className="grid">
        {live.nodes.map((n) => (
          <div key={n.nodeID} className="node-column">
            <NodeCard node={n} />
            <div className="card">
              <div className="muted">
                {n.url} · up since {relative(n.startedAt)} · heartbeat {relative(n.heartbeatAt)}
              </div>
              <div>
                {n.sandboxCount} running · {n.sandboxPausedCount} paused · {n.sandboxStartingCount}{' '}
                starting
              </div>
              <div>Templates cached: {n.templates.join(', ') || '—'}</div>
              {kind === 'gateway' && <DrainButton node={n} />}
            </div>
          </div>
        ))}
      </div>
      {kind === 'node' && (
        <p className="muted">Drain is a cluster operation: open the gateway's dashboard.</p>
      )}
    </div>
  );
}
