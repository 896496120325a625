/**
 * Snapshots, in E2B's shapes:
 * - `POST /sandboxes/{id}/snapshots` body `{name?}` → 201 `{snapshotID, names}`;
 * - `GET /snapshots?sandboxID=&name=&limit=&nextToken=` → 200 `SnapshotInfo[]`
 *   (+ `x-next-token` when more pages exist);
 * - `GET /snapshots/{id}` → 200 `SnapshotInfo` (aenv);
 * - `DELETE /snapshots/{id}` (aenv) and `DELETE /templates/{id}` (E2B's
 *   `deleteSnapshot`) → 204; 404 when unknown.
 * A snapshot id or name is accepted as `templateID` on create.
 *
 * @module
 */
import { AenvError, assertName } from '@aenv/shared';
import type { SnapshotRecord } from '../../snapshot/snapshot-record.js';
import type { ApiContext } from '../api-context.js';
import { optionalString, queryInteger } from '../fields.js';
import { readJsonBody } from '../http-io.js';
import type { Reply, RouteContext } from '../router.js';
import { ownedUserSnapshot, sandboxParam, scopeOf, sees } from '../tenant-access.js';
import { assertDeletable } from './template.get.js';

/** `SnapshotInfo`. */
export interface SnapshotView {
  readonly snapshotID: string;
  readonly names: string[];
  readonly sandboxID: string | undefined;
  readonly templateID: string;
  readonly createdAt: string;
  readonly lineage: readonly string[];
}

function view(r: SnapshotRecord): SnapshotView {
  return {
    snapshotID: r.id,
    names: r.name === undefined ? [] : [r.name],
    sandboxID: r.sandboxId,
    templateID: r.templateId,
    createdAt: r.createdAt,
    lineage: r.lineage ?? [r.id],
  };
}

/** The create-snapshot handler. */
export function createSnapshot(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    sandboxParam(api, ctx);
    const name = optionalString(await readJsonBody(ctx.req), 'name');
    if (name !== undefined) assertName('snapshot', name);
    const record = await api.orchestrator.snapshot(sandboxParam(api, ctx).id, name);
    return { status: 201, body: { snapshotID: record.id, names: view(record).names } };
  };
}

/** The list-snapshots handler. */
export function listSnapshots(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const q = ctx.query;
    const sandboxId = q.get('sandboxID');
    const name = q.get('name');
    const scope = scopeOf(ctx);
    const all = api.orchestrator
      .listSnapshots()
      .filter(
        (s) =>
          sees(scope, s) &&
          (sandboxId === null || s.sandboxId === sandboxId) &&
          (name === null || s.name === name),
      );
    const limit = queryInteger(q, 'limit', 100, { min: 1, max: 100 });
    const token = q.get('nextToken');
    let start = 0;
    if (token !== null && token !== '') {
      const after = Buffer.from(token, 'base64url').toString('utf8');
      start = all.findIndex((s) => s.id === after) + 1;
      if (start === 0) {
        throw new AenvError('API_BODY_INVALID', "query parameter 'nextToken' is not valid", {
          fields: { field: 'nextToken' },
        });
      }
    }
    const items = all.slice(start, start + limit);
    const last = items.at(-1);
    const more = start + limit < all.length && last !== undefined;
    return {
      status: 200,
      body: items.map(view),
      headers: more ? { 'x-next-token': Buffer.from(last.id).toString('base64url') } : {},
    };
  };
}

/** The get-snapshot handler. */
export function getSnapshot(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const id = ctx.params.id ?? '';
    const record = ownedUserSnapshot(api, ctx, id);
    if (record === undefined) {
      throw new AenvError('SNAPSHOT_NOT_FOUND', `snapshot ${id} not found`, {
        fields: { snapshotId: id },
      });
    }
    return { status: 200, body: view(record) };
  };
}

/** The delete handler (`/snapshots/{id}` and `/templates/{id}`). */
export function deleteSnapshot(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const id = ctx.params.id ?? '';
    assertDeletable(api, ctx, id);
    await api.orchestrator.deleteSnapshotOrTemplate(id);
    return { status: 204 };
  };
}
