/**
 * Deleting what `DELETE /templates/{id}` and `DELETE /snapshots/{id}` name:
 * a template (never the built-in `base`), or a user snapshot. Files go only
 * once nothing references them (see `SnapshotCatalog`).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { TemplateCatalog } from '../template/template-catalog.js';
import type { SnapshotCatalog } from './snapshot-catalog.js';

/** How the caller knows and releases references. */
export interface SnapshotRefs {
  readonly referenced: (snapshotId: string) => boolean;
  readonly release: (snapshotId: string) => Promise<void>;
}

/**
 * Deletes a template or a user snapshot by id (or a snapshot by name).
 * @throws {AenvError} `SNAPSHOT_NOT_FOUND`, `TEMPLATE_PROTECTED`.
 */
export async function deleteSnapshotOrTemplate(
  templates: TemplateCatalog,
  snapshots: SnapshotCatalog,
  id: string,
  refs: SnapshotRefs,
): Promise<void> {
  const template = templates.find(id);
  if (template !== undefined) {
    if (template.id === 'base') {
      throw new AenvError('TEMPLATE_PROTECTED', 'the base template cannot be deleted', {
        fields: { templateId: id },
      });
    }
    templates.delete(template.id);
    await refs.release(template.snapshotId);
    return;
  }
  const snapshot = snapshots.findUser(id);
  if (snapshot === undefined) {
    throw new AenvError('SNAPSHOT_NOT_FOUND', `snapshot ${id} not found`, {
      fields: { snapshotId: id },
    });
  }
  await snapshots.remove(snapshot.id, refs.referenced);
}
