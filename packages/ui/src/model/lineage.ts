/**
 * The lineage tree of the sandbox detail page: which sandbox was forked
 * from which, which snapshots were taken of which sandbox, and which
 * sandboxes were created from those snapshots, under the template they all
 * come from. Sandboxes and snapshots that are gone (killed, deleted) but
 * still have descendants appear as `missing` nodes, so the tree stays
 * connected.
 *
 * Pure code, shared by the page and its tests.
 *
 * @module
 */
import type { UiSandbox, UiSnapshot } from './ui-types.js';

/** One node of the tree. */
export interface LineageNode {
  readonly kind: 'template' | 'sandbox' | 'snapshot' | 'missing';
  /** `template:<id>`, `sandbox:<id>`, `snapshot:<id>`. */
  readonly key: string;
  readonly id: string;
  readonly label: string;
  readonly state?: string;
  readonly children: LineageNode[];
}

type NodeSpec = Omit<LineageNode, 'children'>;

/** The nodes by key and each node's parent key. */
class Builder {
  readonly nodes = new Map<string, LineageNode>();
  readonly parentOf = new Map<string, string>();

  add(spec: NodeSpec, parent?: string): LineageNode {
    let n = this.nodes.get(spec.key);
    if (n === undefined) {
      n = { ...spec, children: [] };
      this.nodes.set(spec.key, n);
    }
    if (parent !== undefined) this.parentOf.set(spec.key, parent);
    return n;
  }

  /** Adds the parents that are not nodes: templates, and gone sandboxes under their template. */
  addMissing(templateOf: ReadonlyMap<string, string>): void {
    for (const parent of new Set(this.parentOf.values())) {
      if (this.nodes.has(parent)) continue;
      const [kind = '', id = ''] = parent.split(/:(.*)/s);
      if (kind === 'template') {
        this.add({ kind: 'template', key: parent, id, label: id });
        continue;
      }
      const template = templateOf.get(id) ?? 'unknown';
      const root = `template:${template}`;
      this.add({ kind: 'missing', key: parent, id, label: `${kind} ${id} (gone)` }, root);
      this.add({ kind: 'template', key: root, id: template, label: template });
    }
  }

  /** Links children to parents; returns the roots. */
  roots(): LineageNode[] {
    for (const [child, parent] of this.parentOf) {
      const c = this.nodes.get(child);
      const p = this.nodes.get(parent);
      if (c !== undefined && p !== undefined && c !== p) p.children.push(c);
    }
    return [...this.nodes.values()].filter((n) => !this.parentOf.has(n.key));
  }
}

/** Where a sandbox hangs: its fork parent, the last user snapshot it was created from, or its template. */
function sandboxParent(s: UiSandbox, snapshots: ReadonlySet<string>): string {
  if (s.parentSandboxID !== undefined) return `sandbox:${s.parentSandboxID}`;
  const fromSnapshot = [...(s.lineage ?? [])].reverse().find((id) => snapshots.has(id));
  if (fromSnapshot !== undefined) return `snapshot:${fromSnapshot}`;
  return `template:${s.templateID}`;
}

/** Every tree, one per template, children oldest first. */
export function lineageForest(
  sandboxes: readonly UiSandbox[],
  snapshots: readonly UiSnapshot[],
): LineageNode[] {
  const b = new Builder();
  const snapshotIds = new Set(snapshots.map((s) => s.snapshotID));
  const templateOf = new Map<string, string>();
  for (const s of sandboxes) {
    templateOf.set(s.sandboxID, s.templateID);
    // A fork runs its parent's template, so a gone parent still has its place.
    if (s.parentSandboxID !== undefined && !templateOf.has(s.parentSandboxID)) {
      templateOf.set(s.parentSandboxID, s.templateID);
    }
    const key = `sandbox:${s.sandboxID}`;
    const spec: NodeSpec = {
      kind: 'sandbox',
      key,
      id: s.sandboxID,
      label: s.sandboxID,
      state: s.state,
    };
    b.add(spec, sandboxParent(s, snapshotIds));
  }
  for (const s of snapshots) {
    const key = `snapshot:${s.snapshotID}`;
    const parent =
      s.sandboxID === undefined ? `template:${s.templateID}` : `sandbox:${s.sandboxID}`;
    b.add({ kind: 'snapshot', key, id: s.snapshotID, label: s.names[0] ?? s.snapshotID }, parent);
    if (s.sandboxID !== undefined && !templateOf.has(s.sandboxID)) {
      templateOf.set(s.sandboxID, s.templateID);
    }
  }
  b.addMissing(templateOf);
  return b.roots();
}

/** The tree that holds `key` (`sandbox:<id>`), or undefined. */
export function lineageTreeOf(
  forest: readonly LineageNode[],
  key: string,
): LineageNode | undefined {
  const holds = (n: LineageNode): boolean => n.key === key || n.children.some(holds);
  return forest.find(holds);
}
