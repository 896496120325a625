// The node database on a full disk (a small tmpfs this test mounts): a write
// that SQLite cannot make is STORAGE_NO_SPACE (507), never a raw SQLite
// error (500); every record acknowledged before it is still there after the
// database is closed and reopened, and writes work again once space is freed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { mountSmallFs, smallFsSkip, type SmallFs } from '@aenv/storage/testing';
import { NodeDb } from '../src/store/node-db.js';
import {
  NodeStore,
  type SandboxDoc,
  type SnapshotDoc,
  type TemplateDoc,
} from '../src/store/node-store.js';

type Doc = SandboxDoc & { blob: string };
type Store = NodeStore<Doc, SnapshotDoc, TemplateDoc>;

describe('the node database on a full disk', { skip: smallFsSkip() }, () => {
  let work: string;
  let fs: SmallFs;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aenv-node-db-full-'));
    fs = await mountSmallFs(join(work, 'home'), 4);
  });

  after(async () => {
    await fs?.remove();
    await rm(work, { recursive: true, force: true });
  });

  it('answers STORAGE_NO_SPACE and keeps every acknowledged record', async () => {
    const path = join(fs.path, 'node.db');
    let db = NodeDb.open(path);
    let store: Store = new NodeStore(db);
    const acked: string[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        store.sandboxes.put({ id: `s${i}`, state: 'running', blob: 'x'.repeat(4096) });
        acked.push(`s${i}`);
      }
      await fs.fill();
      const big = 'y'.repeat(1 << 20);
      let failure: unknown;
      for (let i = 0; i < 64 && failure === undefined; i++) {
        try {
          store.transaction(() =>
            store.sandboxes.put({ id: `big${i}`, state: 'running', blob: big }),
          );
          acked.push(`big${i}`);
        } catch (err) {
          failure = err;
        }
      }
      assert.ok(failure instanceof AenvError, `a full disk fails the write: ${String(failure)}`);
      assert.equal(failure.code, 'STORAGE_NO_SPACE', failure.message);
      assert.throws(
        () => store.sandboxes.put({ id: 'one-more', state: 'running', blob: big }),
        (err: unknown) => err instanceof AenvError && err.code === 'STORAGE_NO_SPACE',
      );
      db.close();
      await fs.free();
      db = NodeDb.open(path);
      store = new NodeStore(db);
      for (const id of acked) assert.ok(store.sandboxes.get(id), `acknowledged ${id} is kept`);
      assert.equal(store.sandboxes.get('one-more'), undefined, 'the failed write is not there');
      store.sandboxes.put({ id: 'after', state: 'running', blob: 'z' });
      assert.equal(store.sandboxes.get('after')?.blob, 'z');
    } finally {
      db.close();
      await fs.free();
    }
  });
});
