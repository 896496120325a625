/**
 * The node's durable state: one SQLite database (`$AENV_HOME/node.db`,
 * WAL journal, synchronous=FULL so an acknowledged change survives a
 * crash). Each table holds JSON documents keyed by id, plus the columns
 * queries filter on. The schema version is `PRAGMA user_version`;
 * migrations run in order at open.
 *
 * @module
 */
import Database from 'better-sqlite3';
import { AenvError } from '@aenv/shared';
import { writeOrNoSpace } from './sqlite-full.js';

type Db = Database.Database;

/** Schema migrations, in order; index + 1 is the version they produce. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sandboxes (
     id TEXT PRIMARY KEY,
     state TEXT NOT NULL,
     data TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE snapshots (
     id TEXT PRIMARY KEY,
     kind TEXT NOT NULL,
     name TEXT UNIQUE,
     sandbox_id TEXT,
     data TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE TABLE templates (
     id TEXT PRIMARY KEY,
     alias TEXT UNIQUE,
     data TEXT NOT NULL,
     created_at TEXT NOT NULL
   );`,
  `CREATE TABLE idempotency (
     key TEXT PRIMARY KEY,
     scope TEXT NOT NULL,
     status INTEGER NOT NULL,
     body TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );`,
  // Tenants and hashed API keys; every record gets an owner (pre-tenant rows: `default`;
  // templates stay unowned = public). Revoked keys stay, for the record, with `revoked_at`.
  `CREATE TABLE tenants (
     id TEXT PRIMARY KEY,
     quotas TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     tenant TEXT NOT NULL,
     name TEXT NOT NULL,
     role TEXT NOT NULL,
     prefix TEXT NOT NULL,
     hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   ALTER TABLE sandboxes ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
   ALTER TABLE snapshots ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
   ALTER TABLE templates ADD COLUMN tenant TEXT;`,
];

/** An open node database. */
export class NodeDb {
  readonly db: Db;

  private constructor(db: Db) {
    this.db = db;
  }

  /**
   * Opens (creating if needed) and migrates the database at `path`.
   * @throws {AenvError} `NODE_STATE_UNAVAILABLE` when it cannot be opened or is newer than this build.
   */
  static open(path: string): NodeDb {
    let db: Db;
    try {
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
    } catch (err) {
      throw new AenvError('NODE_STATE_UNAVAILABLE', `cannot open the node database ${path}`, {
        cause: err,
        fields: { path },
      });
    }
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      db.close();
      throw new AenvError(
        'NODE_STATE_UNAVAILABLE',
        `the node database ${path} has schema ${version}, newer than this build (${MIGRATIONS.length}); upgrade aenv`,
        { fields: { path } },
      );
    }
    db.transaction(() => {
      for (let v = version; v < MIGRATIONS.length; v++) {
        db.exec(MIGRATIONS[v] as string);
        db.pragma(`user_version = ${v + 1}`);
      }
    })();
    return new NodeDb(db);
  }

  /** Runs `fn` in one transaction. */
  transaction<T>(fn: () => T): T {
    return writeOrNoSpace('transaction', () => this.db.transaction(fn)());
  }

  /** Closes the database. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}
