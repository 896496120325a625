import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import Database from 'better-sqlite3';
import { NodeDb } from './node-db.js';
import { NodeStore, type SandboxDoc, type SnapshotDoc, type TemplateDoc } from './node-store.js';

interface Sbx extends SandboxDoc {
  readonly metadata: Record<string, string>;
}
type Store = NodeStore<Sbx, SnapshotDoc & { dir: string }, TemplateDoc>;

const dir = mkdtempSync(join(tmpdir(), 'aenv-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('NodeStore', () => {
  it('stores, replaces, lists and deletes documents, surviving a reopen', () => {
    const path = join(dir, 'a.db');
    const db = NodeDb.open(path);
    const store: Store = new NodeStore(db);
    store.sandboxes.put({ id: 's1', state: 'running', metadata: { a: '1' } });
    store.sandboxes.put({ id: 's2', state: 'paused', metadata: {} });
    store.sandboxes.put({ id: 's1', state: 'paused', metadata: { a: '2' } });
    store.snapshots.put({ id: 'p1', kind: 'pause', sandboxId: 's2', createdAt: 'x', dir: '/d' });
    store.templates.put({ id: 't1', alias: 'base', createdAt: 'x' });
    db.close();
    const reopened: Store = new NodeStore(NodeDb.open(path));
    assert.deepEqual(reopened.sandboxes.all(), [
      { id: 's1', state: 'paused', metadata: { a: '2' } },
      { id: 's2', state: 'paused', metadata: {} },
    ]);
    assert.equal(reopened.snapshots.get('p1')?.dir, '/d');
    assert.equal(reopened.templates.get('t1')?.alias, 'base');
    assert.equal(reopened.sandboxes.delete('s1'), true);
    assert.equal(reopened.sandboxes.delete('s1'), false);
    assert.equal(reopened.sandboxes.get('s1'), undefined);
  });

  it('rolls a failed transaction back entirely', () => {
    const store: Store = new NodeStore(NodeDb.open(join(dir, 'b.db')));
    store.templates.put({ id: 't1', alias: 'base', createdAt: 'x' });
    assert.throws(() =>
      store.transaction(() => {
        store.sandboxes.put({ id: 's9', state: 'running', metadata: {} });
        store.templates.put({ id: 't2', alias: 'base', createdAt: 'x' }); // alias is unique
      }),
    );
    assert.equal(store.sandboxes.get('s9'), undefined);
  });

  it('keeps every acknowledged write when the process is killed right after', () => {
    const path = join(dir, 'c.db');
    const script = join(dir, 'writer.cjs');
    writeFileSync(
      script,
      `const D = require(${JSON.stringify(require_resolve())});
       const db = new D(process.argv[2]); db.pragma('journal_mode = WAL'); db.pragma('synchronous = FULL');
       db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY)");
       const ins = db.prepare('INSERT INTO t (id) VALUES (?)');
       for (let i = 1; i <= 200; i++) { ins.run(i); process.stdout.write(i + '\\n'); }
       process.kill(process.pid, 'SIGKILL');`,
    );
    let acked = 0;
    try {
      execFileSync(process.execPath, [script, path], { encoding: 'utf8' });
    } catch (err) {
      const out = String((err as { stdout?: string }).stdout ?? '');
      acked = Number(out.trim().split('\n').at(-1));
    }
    assert.equal(acked, 200);
    const db = new Database(path);
    assert.equal((db.prepare('SELECT count(*) n FROM t').get() as { n: number }).n, 200);
    db.close();
  });

  it('refuses a database from a newer build with a clear error', () => {
    const path = join(dir, 'd.db');
    const raw = new Database(path);
    raw.pragma('user_version = 99');
    raw.close();
    assert.throws(
      () => NodeDb.open(path),
      (err: unknown) =>
        err instanceof AenvError &&
        err.code === 'NODE_STATE_UNAVAILABLE' &&
        /newer/.test(err.message),
    );
  });
});

function require_resolve(): string {
  return createRequire(import.meta.url).resolve('better-sqlite3');
}
