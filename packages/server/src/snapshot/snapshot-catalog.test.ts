/**
 * The snapshot catalog's sweep after a crash: directories no record names
 * and older than this process go; recorded ones and fresh ones stay.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openNodeState } from '../store/node-state.js';

const home = mkdtempSync(join(tmpdir(), 'aenv-snapcat-'));
after(() => rmSync(home, { recursive: true, force: true }));

describe('SnapshotCatalog.removeUnrecorded', () => {
  it('removes only unrecorded directories that predate this process', async () => {
    const state = openNodeState(home);
    try {
      const { snapshots } = state;
      const recorded = snapshots.allocate();
      const orphan = snapshots.allocate();
      const fresh = snapshots.allocate();
      for (const s of [recorded, orphan, fresh]) mkdirSync(s.dir);
      const old = new Date(Date.now() - process.uptime() * 1000 - 60_000);
      for (const s of [recorded, orphan]) utimesSync(s.dir, old, old);
      snapshots.add({
        id: recorded.id,
        kind: 'user',
        dir: recorded.dir,
        image: { layers: [] },
        createdAt: new Date().toISOString(),
      } as unknown as Parameters<typeof snapshots.add>[0]);
      assert.equal(await snapshots.removeUnrecorded(), 1);
      assert.deepEqual(readdirSync(join(home, 'snapshots')).sort(), [recorded.id, fresh.id].sort());
    } finally {
      state.close();
    }
  });
});
