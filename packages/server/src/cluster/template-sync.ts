/**
 * Template synchronisation between the nodes of a cluster: a template
 * built on one node is exported to the shared store and listed in the
 * shared catalog (Redis hash `templates`); every other node of the same
 * compat key imports it, under the same template and snapshot ids. A
 * rebuild (new snapshot id) propagates the same way, and so does a
 * deletion.
 *
 * Each node remembers the snapshot id it last agreed on per template
 * (`$AENV_HOME/cluster/templates-synced.json`), which tells a local change
 * (export it) from a remote one (import it). When both changed, the newer
 * wins; with equal build keys (the same inputs, e.g. `base` built on two
 * nodes at once) the shared one wins, so nodes converge on one snapshot
 * and its memory base — which is what lets paused sandboxes move between
 * nodes without their memory.
 *
 * @module
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { LOG_FIELDS, type ClusterKeys, type SharedTemplate } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { TemplateCatalog } from '../template/template-catalog.js';
import type { TemplateRecord } from '../template/template-record.js';
import type { SharedSnapshots } from './shared-snapshots.js';

/** What synchronisation needs. */
export interface TemplateSyncOptions {
  readonly redis: Redis;
  readonly keys: ClusterKeys;
  readonly shared: SharedSnapshots;
  readonly templates: TemplateCatalog;
  readonly snapshots: SnapshotCatalog;
  /** Where snapshot directories go (`$AENV_HOME/snapshots`). */
  readonly snapshotsDir: string;
  readonly nodeId: string;
  readonly compat: string;
  /** `$AENV_HOME/cluster/templates-synced.json`. */
  readonly syncedFile: string;
  /** Deletes a snapshot unless something still uses it. */
  readonly release: (snapshotId: string) => Promise<void>;
  readonly logger: Logger;
}

/** What one pass did. */
export interface SyncResult {
  readonly exported: string[];
  readonly imported: string[];
  readonly deleted: string[];
}

/** The lease name of the `base` build for one build key. */
function baseLock(buildKey: string): string {
  return `base-build:${buildKey.replace(/[^A-Za-z0-9]/g, '').slice(0, 40)}`;
}

/** Keeps this node's templates in line with the shared catalog. */
export class TemplateSync {
  readonly #o: TemplateSyncOptions;
  #synced: Record<string, string>;
  #baseLockKey: string | undefined;

  constructor(options: TemplateSyncOptions) {
    this.#o = options;
    this.#synced = readSynced(options.syncedFile);
  }

  /**
   * Before the node builds its `base`: imports the shared one when it was
   * built from the same inputs, else waits (up to `waitMs`) while another
   * node builds it, else takes the build lease (this node builds; the
   * next sync exports it).
   * @returns whether the shared base was imported.
   */
  async adoptSharedBase(buildKey: string, waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const entry = (await this.#shared()).get('base');
      if (entry !== undefined && entry.buildKey === buildKey) {
        await this.#import(entry, this.#o.templates.find('base'));
        this.#save();
        return true;
      }
      const key = this.#o.keys.lock(baseLock(buildKey));
      if ((await this.#o.redis.set(key, this.#o.nodeId, 'PX', 15 * 60_000, 'NX')) === 'OK') {
        this.#baseLockKey = key;
        return false;
      }
      if (Date.now() > deadline) return false;
      await sleep(1000);
    }
  }

  /** One pass: exports local changes, imports remote ones. */
  async run(): Promise<SyncResult> {
    const result: SyncResult = { exported: [], imported: [], deleted: [] };
    const shared = await this.#shared();
    const local = new Map(this.#o.templates.list().map((t) => [t.id, t]));
    for (const id of new Set([...local.keys(), ...shared.keys()])) {
      try {
        await this.#one(id, local.get(id), shared.get(id), result);
      } catch (err) {
        this.#o.logger.warn('template sync failed', {
          [LOG_FIELDS.templateId]: id,
          ...errorFields(err),
        });
      }
    }
    for (const id of Object.keys(this.#synced)) {
      if (!local.has(id) && !shared.has(id)) delete this.#synced[id];
    }
    this.#save();
    return result;
  }

  async #one(
    id: string,
    l: TemplateRecord | undefined,
    e: SharedTemplate | undefined,
    result: SyncResult,
  ): Promise<void> {
    const s = this.#synced[id];
    if (l !== undefined && e !== undefined && l.snapshotId === e.snapshotId) {
      this.#synced[id] = l.snapshotId;
      return;
    }
    const localChanged = l === undefined ? s !== undefined : l.snapshotId !== s;
    const remoteChanged = e === undefined ? s !== undefined : e.snapshotId !== s;
    if (!localChanged && !remoteChanged) return;
    if (remoteChanged && (!localChanged || this.#remoteWins(l, e))) {
      await this.#takeRemote(id, l, e, result);
    } else {
      await this.#pushLocal(id, l, result);
    }
  }

  /** The shared catalog changed: import its template, or delete ours if it was deleted. */
  async #takeRemote(
    id: string,
    l: TemplateRecord | undefined,
    e: SharedTemplate | undefined,
    result: SyncResult,
  ): Promise<void> {
    if (e !== undefined) {
      await this.#import(e, l);
      result.imported.push(id);
    } else if (l !== undefined && id !== 'base') {
      this.#o.templates.delete(id);
      await this.#o.release(l.snapshotId);
      delete this.#synced[id];
      result.deleted.push(id);
    }
  }

  /** This node's template changed: export it, or delete the shared entry if it was deleted here. */
  async #pushLocal(id: string, l: TemplateRecord | undefined, result: SyncResult): Promise<void> {
    if (l !== undefined) {
      await this.#export(l);
      result.exported.push(id);
    } else if (id !== 'base') {
      await this.#o.redis.hdel(this.#o.keys.templates, id);
      delete this.#synced[id];
      result.deleted.push(id);
    }
  }

  #remoteWins(l: TemplateRecord | undefined, e: SharedTemplate | undefined): boolean {
    if (e === undefined) return l === undefined;
    if (l === undefined || l.buildKey === e.buildKey) return true;
    return Date.parse(e.exportedAt) >= Date.parse(l.updatedAt ?? l.createdAt);
  }

  async #export(l: TemplateRecord): Promise<void> {
    const snapshot = this.#o.snapshots.get(l.snapshotId);
    await this.#o.shared.export(snapshot, { template: l });
    const entry: SharedTemplate = {
      templateId: l.id,
      aliases: l.alias === undefined ? [] : [l.alias],
      snapshotId: l.snapshotId,
      node: this.#o.nodeId,
      compat: this.#o.compat,
      buildKey: l.buildKey,
      exportedAt: new Date().toISOString(),
    };
    await this.#o.redis.hset(this.#o.keys.templates, l.id, JSON.stringify(entry));
    this.#synced[l.id] = l.snapshotId;
    if (l.id === 'base' && this.#baseLockKey !== undefined) {
      await this.#o.redis.del(this.#baseLockKey);
      this.#baseLockKey = undefined;
    }
    this.#o.logger.info('template exported to the cluster', {
      [LOG_FIELDS.templateId]: l.id,
      [LOG_FIELDS.snapshotId]: l.snapshotId,
    });
  }

  async #import(e: SharedTemplate, l: TemplateRecord | undefined): Promise<void> {
    const t0 = performance.now();
    let template: TemplateRecord | undefined;
    if (this.#o.snapshots.find(e.snapshotId) === undefined) {
      const exp = await this.#o.shared.import(
        e.snapshotId,
        join(this.#o.snapshotsDir, e.snapshotId),
      );
      this.#o.snapshots.add(exp.snapshot);
      template = exp.template;
    } else {
      template = (await this.#o.shared.read(e.snapshotId)).template;
    }
    if (template === undefined)
      throw new Error(`export of template ${e.templateId} has no template record`);
    if (l !== undefined && l.alias !== template.alias) this.#o.templates.delete(l.id);
    this.#o.templates.put(template);
    this.#synced[e.templateId] = e.snapshotId;
    if (l !== undefined && l.snapshotId !== e.snapshotId) await this.#o.release(l.snapshotId);
    this.#o.logger.info('template imported from the cluster', {
      [LOG_FIELDS.templateId]: e.templateId,
      [LOG_FIELDS.snapshotId]: e.snapshotId,
      [LOG_FIELDS.nodeId]: e.node,
      [LOG_FIELDS.durationMs]: Math.round(performance.now() - t0),
    });
  }

  async #shared(): Promise<Map<string, SharedTemplate>> {
    const all = await this.#o.redis.hgetall(this.#o.keys.templates);
    const out = new Map<string, SharedTemplate>();
    for (const [id, text] of Object.entries(all)) {
      try {
        const e = JSON.parse(text) as SharedTemplate;
        if (e.compat === this.#o.compat) out.set(id, e);
      } catch {
        // a malformed entry is ignored (the next export replaces it)
      }
    }
    return out;
  }

  #save(): void {
    mkdirSync(dirname(this.#o.syncedFile), { recursive: true, mode: 0o700 });
    writeFileSync(this.#o.syncedFile, `${JSON.stringify(this.#synced, null, 2)}\n`, {
      mode: 0o600,
    });
  }
}

function readSynced(path: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}
