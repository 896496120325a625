/**
 * The node's durable state, opened once: the SQLite database under
 * `$AENV_HOME` and the catalogs over it (sandbox records, snapshots,
 * templates, tenants and API keys).
 *
 * @module
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxDoc } from '../orchestrator/sandbox.js';
import { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import { TemplateCatalog } from '../template/template-catalog.js';
import type { TemplateRecord } from '../template/template-record.js';
import { NodeDb } from './node-db.js';
import { NodeStore, type DocTable } from './node-store.js';
import { TenantStore } from './tenant-store.js';

/** The opened state of a node. */
export interface NodeState {
  readonly db: NodeDb;
  readonly sandboxes: DocTable<SandboxDoc>;
  readonly snapshots: SnapshotCatalog;
  readonly templates: TemplateCatalog;
  readonly tenants: TenantStore;
  close(): void;
}

/**
 * Opens `$AENV_HOME/node.db` and `$AENV_HOME/snapshots/`.
 * @throws {AenvError} `NODE_STATE_UNAVAILABLE`.
 */
export function openNodeState(home: string): NodeState {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const snapshotsDir = join(home, 'snapshots');
  mkdirSync(snapshotsDir, { recursive: true, mode: 0o700 });
  const db = NodeDb.open(join(home, 'node.db'));
  const store = new NodeStore<SandboxDoc, SnapshotRecord, TemplateRecord>(db);
  return {
    db,
    sandboxes: store.sandboxes,
    snapshots: new SnapshotCatalog(store.snapshots, snapshotsDir),
    templates: new TemplateCatalog(store.templates),
    tenants: new TenantStore(db),
    close: () => db.close(),
  };
}
