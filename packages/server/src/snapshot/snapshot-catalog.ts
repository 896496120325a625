/**
 * The node's snapshots: records in the node store, VMM directories under
 * `$AENV_HOME/snapshots/<id>`. A snapshot is deleted only when nothing
 * references it any more: no sandbox (paused in it, or running from it), no
 * template, and no other snapshot whose VMM manifest names it as a parent.
 * (Disk layers are reference-counted with the blob store's GC later.)
 *
 * @module
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AenvError, newId } from '@aenv/shared';
import type { DocTable } from '../store/node-store.js';
import type { SnapshotRecord } from './snapshot-record.js';

/** Who else may hold a snapshot. */
export type SnapshotReferences = (snapshotId: string) => boolean;

/** Records and directories of the node's snapshots. */
export class SnapshotCatalog {
  readonly #table: DocTable<SnapshotRecord>;
  readonly #root: string;
  readonly #deleteListeners: ((record: SnapshotRecord) => void)[] = [];

  constructor(table: DocTable<SnapshotRecord>, root: string) {
    this.#table = table;
    this.#root = root;
  }

  /** Calls `listener` after each snapshot is deleted (its layers may now be garbage). */
  onDelete(listener: (record: SnapshotRecord) => void): void {
    this.#deleteListeners.push(listener);
  }

  /** Every layer digest any snapshot record names (deleted-but-referenced ones included). */
  layers(): Set<string> {
    return new Set(this.list().flatMap((s) => s.image.layers));
  }

  /** A fresh id and the directory its VMM state goes to (not created). */
  allocate(): { id: string; dir: string } {
    const id = newId();
    return { id, dir: join(this.#root, id) };
  }

  /** Records a snapshot (durable when this returns). */
  add(record: SnapshotRecord): void {
    this.#table.put(record);
  }

  /** A snapshot by id, or undefined. */
  find(id: string): SnapshotRecord | undefined {
    return this.#table.get(id);
  }

  /**
   * A snapshot by id.
   * @throws {AenvError} `SNAPSHOT_NOT_FOUND`.
   */
  get(id: string): SnapshotRecord {
    const r = this.find(id);
    if (r === undefined) throw this.#notFound(id);
    return r;
  }

  #notFound(id: string): AenvError {
    return new AenvError('SNAPSHOT_NOT_FOUND', `snapshot ${id} not found`, {
      fields: { snapshotId: id },
    });
  }

  /**
   * Deletes a user's snapshot: at once when nothing references it, else it
   * is hidden and removed when the last reference goes.
   * @throws {AenvError} `SNAPSHOT_NOT_FOUND`.
   */
  async remove(id: string, references: SnapshotReferences): Promise<void> {
    const record = this.get(id);
    if (record.deleted === true) throw this.#notFound(id);
    this.#table.put({ ...record, deleted: true });
    await this.release(id, references);
  }

  /** A user's snapshot by id or name, not deleted; undefined otherwise. */
  findUser(idOrName: string): SnapshotRecord | undefined {
    const byId = this.find(idOrName);
    const r = byId ?? this.list().find((s) => s.name === idOrName);
    return r !== undefined && r.kind === 'user' && r.deleted !== true ? r : undefined;
  }

  /** Every snapshot, oldest first. */
  list(): SnapshotRecord[] {
    return this.#table.all();
  }

  /**
   * Deletes a snapshot and its directory unless something still references
   * it; returns whether it was deleted.
   */
  async release(id: string, references: SnapshotReferences): Promise<boolean> {
    const record = this.find(id);
    if (record === undefined) return false;
    // A user's snapshot lives until the user deletes it; a template's while its template does.
    if (record.kind === 'user' && record.deleted !== true) return false;
    if (references(id) || (await this.#isParent(record))) return false;
    this.#table.delete(id);
    if (record.dir !== undefined) await rm(record.dir, { recursive: true, force: true });
    for (const listener of this.#deleteListeners) listener(record);
    return true;
  }

  /**
   * Deletes directories of the snapshot root that no record names and that
   * predate this process: what a crash between writing a snapshot and
   * recording it left. Newer ones may be a snapshot being written now.
   * @returns how many were deleted.
   */
  async removeUnrecorded(): Promise<number> {
    const startedAt = Date.now() - process.uptime() * 1000;
    let names: string[];
    try {
      names = await readdir(this.#root);
    } catch {
      return 0;
    }
    const recorded = new Set(
      this.list().flatMap((r) => (r.dir === undefined ? [] : [resolve(r.dir)])),
    );
    let removed = 0;
    for (const name of names) {
      const dir = resolve(this.#root, name);
      if (recorded.has(dir)) continue;
      const info = await stat(dir).catch(() => undefined);
      if (info === undefined || info.mtimeMs >= startedAt) continue;
      await rm(dir, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /** Whether another snapshot's VMM manifest names this one's directory as a parent. */
  async #isParent(record: SnapshotRecord): Promise<boolean> {
    if (record.dir === undefined) return false;
    const target = resolve(record.dir);
    for (const other of this.list()) {
      if (other.id === record.id || other.dir === undefined) continue;
      const parents = await manifestParents(other.dir);
      if (parents.some((p) => resolve(other.dir as string, p) === target)) return true;
    }
    return false;
  }
}

/** The parent directories a VMM manifest lists (none for self-contained snapshots). */
async function manifestParents(dir: string): Promise<string[]> {
  try {
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as {
      parents?: unknown;
    };
    const parents = manifest.parents;
    if (!Array.isArray(parents)) return [];
    return parents.flatMap((p: unknown) => {
      if (typeof p === 'string') return [p];
      if (typeof p === 'object' && p !== null && typeof (p as { dir?: unknown }).dir === 'string') {
        return [(p as { dir: string }).dir];
      }
      return [];
    });
  } catch {
    return [];
  }
}
