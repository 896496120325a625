/**
 * Typed access to the node database: sandboxes, snapshots and templates
 * as JSON documents (dates as RFC 3339 strings). Writes are synchronous
 * and durable when they return; callers persist a state change before
 * they acknowledge it to a client.
 *
 * @module
 */
import type { Statement } from 'better-sqlite3';
import { DEFAULT_TENANT } from '@aenv/shared';
import type { NodeDb } from './node-db.js';
import { writeOrNoSpace } from './sqlite-full.js';

/** A stored document: an id and JSON-safe fields. */
export interface StoredDoc {
  readonly id: string;
}

/** One JSON-document table with a few indexed columns. */
class DocTable<T extends StoredDoc> {
  readonly #put: Statement;
  readonly #get: Statement<[string]>;
  readonly #del: Statement<[string]>;
  readonly #all: Statement<[]>;
  readonly #columns: readonly string[];
  readonly #extract: (doc: T) => Record<string, string | null>;

  constructor(
    db: NodeDb,
    table: string,
    columns: readonly string[],
    extract: (doc: T) => Record<string, string | null>,
  ) {
    this.#columns = columns;
    this.#extract = extract;
    const names = ['id', ...columns, 'data'];
    // An upsert, not INSERT OR REPLACE: replacing would give the row a new rowid (list order).
    // A put that names no owner keeps the one recorded (a template rebuilt by the builder).
    const updates = names
      .filter((n) => n !== 'id')
      .map((n) =>
        n === 'tenant' ? 'tenant = COALESCE(excluded.tenant, tenant)' : `${n} = excluded.${n}`,
      );
    this.#put = db.db.prepare(
      `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})
       ON CONFLICT(id) DO UPDATE SET ${updates.join(', ')}`,
    );
    this.#get = db.db.prepare(`SELECT data FROM ${table} WHERE id = ?`);
    this.#del = db.db.prepare(`DELETE FROM ${table} WHERE id = ?`);
    this.#all = db.db.prepare(`SELECT data FROM ${table} ORDER BY rowid`);
  }

  put(doc: T): void {
    const row: Record<string, string | null> = { id: doc.id, data: JSON.stringify(doc) };
    const extra = this.#extract(doc);
    for (const c of this.#columns) row[c] = extra[c] ?? null;
    writeOrNoSpace(`put ${doc.id}`, () => this.#put.run(row));
  }

  get(id: string): T | undefined {
    const row = this.#get.get(id) as { data: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.data) as T);
  }

  delete(id: string): boolean {
    return writeOrNoSpace(`delete ${id}`, () => this.#del.run(id)).changes > 0;
  }

  all(): T[] {
    return (this.#all.all() as { data: string }[]).map((r) => JSON.parse(r.data) as T);
  }
}

/** What a sandbox document must carry for the indexed columns. */
export interface SandboxDoc extends StoredDoc {
  readonly state: string;
  /** The owning tenant; absent = `default` (records from before tenants). */
  readonly tenant?: string | undefined;
}

/** What a snapshot document must carry. */
export interface SnapshotDoc extends StoredDoc {
  readonly kind: string;
  readonly name?: string | undefined;
  readonly sandboxId?: string | undefined;
  readonly createdAt: string;
  /** The owning tenant; absent = `default`. */
  readonly tenant?: string | undefined;
}

/** What a template document must carry. */
export interface TemplateDoc extends StoredDoc {
  readonly alias?: string | undefined;
  readonly createdAt: string;
  /** The owning tenant; absent = public (the base template, pre-tenant templates). */
  readonly tenant?: string | undefined;
}

/** The node's tables. */
export class NodeStore<S extends SandboxDoc, P extends SnapshotDoc, T extends TemplateDoc> {
  readonly sandboxes: DocTable<S>;
  readonly snapshots: DocTable<P>;
  readonly templates: DocTable<T>;
  readonly #db: NodeDb;

  constructor(db: NodeDb) {
    this.#db = db;
    const now = (): string => new Date().toISOString();
    this.sandboxes = new DocTable<S>(db, 'sandboxes', ['state', 'updated_at', 'tenant'], (d) => ({
      state: d.state,
      updated_at: now(),
      tenant: d.tenant ?? DEFAULT_TENANT,
    }));
    this.snapshots = new DocTable<P>(
      db,
      'snapshots',
      ['kind', 'name', 'sandbox_id', 'created_at', 'tenant'],
      (d) => ({
        kind: d.kind,
        name: d.name ?? null,
        sandbox_id: d.sandboxId ?? null,
        created_at: d.createdAt,
        tenant: d.tenant ?? DEFAULT_TENANT,
      }),
    );
    this.templates = new DocTable<T>(db, 'templates', ['alias', 'created_at', 'tenant'], (d) => ({
      alias: d.alias ?? null,
      created_at: d.createdAt,
      tenant: d.tenant ?? null,
    }));
  }

  /** Runs `fn` atomically (several puts/deletes commit together or not at all). */
  transaction<R>(fn: () => R): R {
    return this.#db.transaction(fn);
  }
}

export type { DocTable };
