/**
 * The node's cluster routes: what the gateway calls on a node besides the
 * public node API, behind the same API key. Present only on clustered
 * nodes.
 *
 * - `POST /cluster/sandboxes/{id}/adopt` `{snapshotID}`: take a paused
 *   sandbox over from its exported pause snapshot → 200 `ListedSandbox`;
 * - `POST /cluster/sandboxes/{id}/release`: drop the local copy of a
 *   sandbox another node took over → 204;
 * - `POST /cluster/snapshots/{id}/export`: export a user snapshot to the
 *   shared store → 200 `{snapshotID, exportedAt}`;
 * - `POST /cluster/snapshots/{id}/import`: import an exported user
 *   snapshot → 200 `{snapshotID}` (creates from it then work here);
 * - `POST /cluster/templates/sync`: one template sync pass now → 200
 *   `{exported, imported, deleted}`.
 *
 * @module
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import { requiredString } from '../api/fields.js';
import { readJsonBody } from '../api/http-io.js';
import type { Reply, Route, RouteContext } from '../api/router.js';
import { toListedView } from '../api/sandbox-view.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SandboxExports } from './sandbox-exports.js';
import type { SharedSnapshots } from './shared-snapshots.js';
import type { SyncResult } from './template-sync.js';

/** What the routes act on. */
export interface ClusterRouteDeps {
  readonly orchestrator: Orchestrator;
  readonly exports: SandboxExports;
  readonly shared: SharedSnapshots;
  readonly snapshots: SnapshotCatalog;
  readonly snapshotsDir: string;
  readonly syncTemplates: () => Promise<SyncResult>;
}

/** The cluster routes of a node. */
export function clusterRoutes(d: ClusterRouteDeps): Route[] {
  const id = (ctx: RouteContext): string => ctx.params.id ?? '';
  return [
    {
      method: 'POST',
      path: '/cluster/sandboxes/:id/adopt',
      handler: async (ctx) => {
        const snapshotId = requiredString(await readJsonBody(ctx.req), 'snapshotID');
        const record = await d.exports.adopt(d.orchestrator, id(ctx), snapshotId);
        return { status: 200, body: toListedView(record) };
      },
    },
    {
      method: 'POST',
      path: '/cluster/sandboxes/:id/release',
      handler: async (ctx) => {
        await d.exports.release(d.orchestrator, id(ctx));
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      path: '/cluster/snapshots/:id/export',
      handler: async (ctx) => {
        const record = d.orchestrator.listSnapshots().find((s) => s.id === id(ctx));
        if (record === undefined) throw notFound(id(ctx));
        const exp = await d.shared.export(record);
        return { status: 200, body: { snapshotID: record.id, exportedAt: exp.exportedAt } };
      },
    },
    {
      method: 'POST',
      path: '/cluster/snapshots/:id/import',
      handler: async (ctx) => importSnapshot(d, id(ctx)),
    },
    {
      method: 'POST',
      path: '/cluster/templates/sync',
      handler: async () => ({ status: 200, body: await d.syncTemplates() }),
    },
  ];
}

async function importSnapshot(d: ClusterRouteDeps, snapshotId: string): Promise<Reply> {
  if (d.snapshots.find(snapshotId) !== undefined) {
    return { status: 200, body: { snapshotID: snapshotId } };
  }
  const dir = join(d.snapshotsDir, snapshotId);
  const exp = await d.shared.import(snapshotId, dir);
  try {
    if (exp.snapshot.kind !== 'user') {
      throw new AenvError('INVALID_ARGUMENT', `snapshot ${snapshotId} is not a user snapshot`, {
        fields: { snapshotId },
      });
    }
    d.snapshots.add(exp.snapshot);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (err instanceof AenvError) throw err;
    throw new AenvError('SNAPSHOT_NAME_TAKEN', `snapshot ${snapshotId}'s name is taken here`, {
      cause: err,
      fields: { snapshotId },
    });
  }
  return { status: 200, body: { snapshotID: snapshotId } };
}

function notFound(id: string): AenvError {
  return new AenvError('SNAPSHOT_NOT_FOUND', `snapshot ${id} not found`, {
    fields: { snapshotId: id },
  });
}
