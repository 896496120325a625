import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { FsBlobStore } from '@aenv/storage';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import { PrefixedBlobStore } from './prefixed-blob-store.js';
import { SharedSnapshots } from './shared-snapshots.js';

const root = mkdtempSync(join(tmpdir(), 'aenv-shared-snap-'));
after(() => rmSync(root, { recursive: true, force: true }));
const store = new PrefixedBlobStore(new FsBlobStore(join(root, 'blobs')), 'cluster/');

const MiB = 2 ** 20;

/** A VMM snapshot directory as the qemu driver writes one: a sparse memory file, state, diff, manifest. */
async function snapshotDir(name: string, baseId: string): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir);
  const mem = await open(join(dir, 'memory'), 'w');
  await mem.truncate(64 * MiB);
  await mem.write(Buffer.alloc(4096, 7), 0, 4096, 5 * MiB);
  await mem.write(randomBytes(8192), 0, 8192, 40 * MiB);
  await mem.close();
  writeFileSync(join(dir, 'vmstate'), randomBytes(70_000));
  writeFileSync(join(dir, 'memory.diff'), randomBytes(10_000));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ memory: { file: 'memory', bytes: 64 * MiB, baseId } }),
  );
  return dir;
}

function record(id: string, dir: string): SnapshotRecord {
  return {
    id,
    kind: 'pause',
    sandboxId: 'sbx1',
    templateId: 'base',
    dir,
    image: { virtualSize: 1 << 30, layers: [] },
    vcpus: 1,
    memoryMiB: 64,
    diskSizeMiB: 1024,
    envdVersion: '0.5.7',
    createdAt: new Date().toISOString(),
  };
}

function shared(node: string, compat: string, localBase?: string): SharedSnapshots {
  return new SharedSnapshots({
    store,
    workDir: join(root, `${node}-work`),
    node,
    compat,
    compression: 'deflate',
    localBase: () => Promise.resolve(localBase),
  });
}

describe('SharedSnapshots', () => {
  it('exports a snapshot and rebuilds it elsewhere: same files, sparse memory, base stored once', async () => {
    const dir = await snapshotDir('a', 'base-1');
    const a = shared('node-a', 'c1');
    const exp = await a.export(record('snap1', dir), { sandbox: { id: 'sbx1' } as never });
    assert.deepEqual(exp.memory, { file: 'memory', baseId: 'base-1', bytes: 64 * MiB });
    assert.deepEqual(exp.files.map((f) => f.name).sort(), [
      'manifest.json',
      'memory.diff',
      'vmstate',
    ]);

    const target = join(root, 'b-snap1');
    const b = shared('node-b', 'c1');
    const imported = await b.import('snap1', target);
    assert.equal(imported.snapshot.dir, target);
    assert.equal(imported.sandbox?.id, 'sbx1');
    for (const f of ['vmstate', 'memory.diff', 'manifest.json', 'memory']) {
      assert.ok(readFileSync(join(dir, f)).equals(readFileSync(join(target, f))), f);
    }
    const st = statSync(join(target, 'memory'));
    assert.equal(st.size, 64 * MiB);
    assert.ok(st.blocks * 512 < 4 * MiB, 'the memory file stays sparse');
    assert.equal(st.mode & 0o777, 0o440);

    // A second snapshot on the same base uploads no second memory layer.
    const layersBefore = await count('layers/');
    await a.export(record('snap2', await snapshotDir('a2', 'base-1')));
    assert.equal(await count('layers/'), layersBefore);
  });

  it('links a memory base the importing node already holds instead of downloading it', async () => {
    const dir = await snapshotDir('c', 'base-2');
    await shared('node-a', 'c1').export(record('snap3', dir));
    const local = join(dir, 'memory');
    const target = join(root, 'linked');
    await shared('node-b', 'c1', local).import('snap3', target);
    assert.equal(statSync(join(target, 'memory')).ino, statSync(local).ino);
  });

  it('refuses snapshots of nodes with another compat key and unknown ones', async () => {
    await assert.rejects(
      shared('node-x', 'other').import('snap1', join(root, 'x')),
      (e: unknown) => e instanceof AenvError && e.code === 'VMM_SNAPSHOT_INCOMPATIBLE',
    );
    await assert.rejects(
      shared('node-b', 'c1').import('nope', join(root, 'y')),
      (e: unknown) => e instanceof AenvError && e.code === 'SNAPSHOT_NOT_FOUND',
    );
  });

  it('removes an export but keeps the shared memory base', async () => {
    const s = shared('node-a', 'c1');
    await s.remove('snap2');
    await assert.rejects(
      s.read('snap2'),
      (e: unknown) => e instanceof AenvError && e.code === 'SNAPSHOT_NOT_FOUND',
    );
    assert.equal(await count('snapshots/snap2/'), 0);
    assert.ok((await count('bases/')) > 0);
    await s.remove('snap2'); // idempotent
  });
});

async function count(prefix: string): Promise<number> {
  let n = 0;
  for await (const _ of store.list(prefix)) n++;
  return n;
}
