/**
 * The memory bases this node holds: every snapshot directory's manifest
 * names its memory file and `memory.baseId`; snapshots with the same base
 * share one file (hard links). An import of a snapshot built on a base
 * the node holds links that file instead of downloading it, and the node
 * reports its bases so the scheduler can prefer it for such resumes.
 *
 * @module
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from '@aenv/vmm';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';

interface DirBase {
  readonly baseId: string;
  readonly file: string;
}

/** Finds local memory files by base id. */
export class LocalBases {
  readonly #snapshots: SnapshotCatalog;
  /** Manifests never change once written: cache what each directory says. */
  readonly #byDir = new Map<string, DirBase | null>();

  constructor(snapshots: SnapshotCatalog) {
    this.#snapshots = snapshots;
  }

  /** A local memory file with this base id, or undefined. */
  async find(baseId: string): Promise<string | undefined> {
    for (const dir of this.#dirs()) {
      const base = await this.#baseOf(dir);
      if (base?.baseId !== baseId) continue;
      const path = join(dir, base.file);
      const present = await access(path).then(
        () => true,
        () => false,
      );
      if (present) return path;
    }
    return undefined;
  }

  /** Every base id the node holds. */
  async list(): Promise<string[]> {
    const ids = new Set<string>();
    for (const dir of this.#dirs()) {
      const base = await this.#baseOf(dir);
      if (base !== undefined && base !== null) ids.add(base.baseId);
    }
    return [...ids].sort();
  }

  #dirs(): string[] {
    const dirs = this.#snapshots.list().flatMap((s) => (s.dir === undefined ? [] : [s.dir]));
    for (const d of this.#byDir.keys()) if (!dirs.includes(d)) this.#byDir.delete(d);
    return dirs;
  }

  async #baseOf(dir: string): Promise<DirBase | null | undefined> {
    if (this.#byDir.has(dir)) return this.#byDir.get(dir);
    let base: DirBase | null = null;
    try {
      const m = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as {
        memory?: { file?: string | null; baseId?: string };
      };
      if (typeof m.memory?.file === 'string' && typeof m.memory.baseId === 'string') {
        base = { baseId: m.memory.baseId, file: m.memory.file };
      }
    } catch {
      return undefined; // not written yet, or gone: ask again next time
    }
    this.#byDir.set(dir, base);
    return base;
  }
}
