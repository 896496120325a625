import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tempDir, type TempDir } from '../../test/helpers/tmp.js';
import { runBlobStoreSuite } from '../testing/blob-store-suite.js';
import { FsBlobStore } from './fs-blob-store.js';

const dirs = new Map<FsBlobStore, TempDir>();

runBlobStoreSuite({
  name: 'FsBlobStore',
  create: async () => {
    const dir = await tempDir();
    const store = new FsBlobStore(dir.path);
    dirs.set(store, dir);
    return store;
  },
  destroy: async (store) => {
    await dirs.get(store as FsBlobStore)?.remove();
  },
});

describe('FsBlobStore specifics', () => {
  it('offers the local path of a blob and leaves no temporary files', async () => {
    const dir = await tempDir();
    try {
      const store = new FsBlobStore(dir.path);
      await store.put('a/b', Buffer.from('hello'));
      assert.equal(store.localPath('a/b'), `${dir.path}/a/b`);
      const { readdir } = await import('node:fs/promises');
      assert.deepEqual(await readdir(`${dir.path}/.tmp`), []);
    } finally {
      await dir.remove();
    }
  });
});
