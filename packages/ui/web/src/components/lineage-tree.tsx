/**
 * The lineage tree of a sandbox: its template, the sandboxes forked from
 * which, the snapshots taken and the sandboxes created from them (built by
 * `src/model/lineage.ts`). The current sandbox is highlighted; sandboxes
 * link to their pages.
 *
 * @module
 */
import type { LineageNode } from '../../../src/model/lineage.js';
import { href } from '../router.js';

const ICON: Readonly<Record<LineageNode['kind'], string>> = {
  template: '▣',
  sandbox: '●',
  snapshot: '◆',
  missing: '○',
};

function Node({ node, current }: { node: LineageNode; current: string }) {
  const label =
    node.kind === 'sandbox' ? (
      <a href={href('sandboxes', node.id)} className="mono">
        {node.label}
      </a>
    ) : (
      <span className="mono">{node.label}</span>
    );
  return (
    <li>
      <span
        className={`lineage-node kind-${node.kind}${node.key === current ? ' current' : ''}`}
        data-testid="lineage-node"
        data-key={node.key}
      >
        {ICON[node.kind]} {label}
        {node.state !== undefined && <span className="muted"> {node.state}</span>}
      </span>
      {node.children.length > 0 && (
        <ul>
          {node.children.map((c) => (
            <Node key={c.key} node={c} current={current} />
          ))}
        </ul>
      )}
    </li>
  );
}

/** The tree, rooted at its template. */
export function LineageTree({ root, current }: { root: LineageNode; current: string }) {
  return (
    <ul className="lineage" data-testid="lineage-tree">
      <Node node={root} current={current} />
    </ul>
  );
}
