/**
 * `runBlobStoreSuite`: the contract of `BlobStore` (see `blob/blob-store.ts`)
 * as `node:test` cases. The fs and s3 backends both run it; the testkit
 * re-exports it for further backends.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { BlobStore } from '../blob/blob-store.js';
import { skipReason, type SuiteSkip } from './suite-skip.js';

/** Options of {@link runBlobStoreSuite}. */
export interface BlobStoreSuiteOptions {
  readonly name: string;
  /** An empty store. Each test gets a fresh one. */
  readonly create: () => Promise<BlobStore>;
  /** Called after each test. @default store.close() */
  readonly destroy?: (store: BlobStore) => Promise<void>;
  readonly skip?: readonly SuiteSkip[];
}

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array));
  return Buffer.concat(parts);
}

async function keys(store: BlobStore, prefix?: string): Promise<string[]> {
  const out: string[] = [];
  for await (const b of store.list(prefix)) out.push(b.key);
  return out;
}

/** Registers the blob-store conformance tests for one backend. */
export function runBlobStoreSuite(options: BlobStoreSuiteOptions): void {
  const test = (name: string, fn: (s: BlobStore) => Promise<void>) => {
    const reason = skipReason(options.skip, name);
    it(name, reason === undefined ? {} : { skip: reason }, async () => {
      const store = await options.create();
      try {
        await fn(store);
      } finally {
        await (options.destroy ?? (async (s) => s.close?.()))(store);
      }
    });
  };

  describe(`blob store conformance: ${options.name}`, () => {
    writeTests(test);
    readTests(test);
  });
}

type Test = (name: string, fn: (s: BlobStore) => Promise<void>) => void;

function writeTests(test: Test): void {
  test('put bytes, then head, get and getRange them', async (s) => {
    const data = randomBytes(100_000);
    assert.deepEqual(await s.put('a/b/blob', data), { key: 'a/b/blob', size: data.length });
    assert.deepEqual(await s.head('a/b/blob'), { key: 'a/b/blob', size: data.length });
    assert.ok((await collect(await s.get('a/b/blob'))).equals(data));
    assert.ok((await s.getRange('a/b/blob', 12_345, 40_000)).equals(data.subarray(12_345, 52_345)));
    assert.equal((await s.getRange('a/b/blob', data.length - 1, 1))[0], data[data.length - 1]);
  });

  test('put from a stream and from a file', async (s) => {
    const data = randomBytes(11 << 20);
    const parts = [data.subarray(0, 3 << 20), data.subarray(3 << 20)];
    await s.put('streamed', Readable.from(parts));
    assert.ok((await collect(await s.get('streamed'))).equals(data));
    const dir = await mkdtemp(join(tmpdir(), 'aenv-blob-'));
    try {
      await writeFile(join(dir, 'f'), data.subarray(0, 70_000));
      await s.put('from-file', { path: join(dir, 'f') });
      assert.equal((await s.head('from-file'))?.size, 70_000);
      assert.ok((await s.getRange('from-file', 69_990, 10)).equals(data.subarray(69_990, 70_000)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an empty blob exists and is empty', async (s) => {
    await s.put('empty', Buffer.alloc(0));
    assert.deepEqual(await s.head('empty'), { key: 'empty', size: 0 });
    assert.equal((await collect(await s.get('empty'))).length, 0);
    assert.equal((await s.getRange('empty', 0, 0)).length, 0);
  });

  test('put replaces a blob', async (s) => {
    await s.put('k', Buffer.from('first version'));
    await s.put('k', Buffer.from('second'));
    assert.equal((await collect(await s.get('k'))).toString(), 'second');
    assert.equal((await s.head('k'))?.size, 6);
  });
}

function readTests(test: Test): void {
  test('a missing blob: head is undefined, get throws BLOB_NOT_FOUND, delete is fine', async (s) => {
    const key = `missing/${randomUUID()}`;
    assert.equal(await s.head(key), undefined);
    await assert.rejects(s.get(key), { code: 'BLOB_NOT_FOUND' });
    await assert.rejects(s.getRange(key, 0, 1), { code: 'BLOB_NOT_FOUND' });
    await s.delete(key);
  });

  test('delete removes a blob', async (s) => {
    await s.put('gone', Buffer.from('x'));
    await s.delete('gone');
    assert.equal(await s.head('gone'), undefined);
    await s.delete('gone');
  });

  test('getRange past the end throws STORAGE_OUT_OF_RANGE', async (s) => {
    await s.put('short', Buffer.alloc(10, 7));
    await assert.rejects(s.getRange('short', 5, 6), { code: 'STORAGE_OUT_OF_RANGE' });
    await assert.rejects(s.getRange('short', 11, 1), { code: 'STORAGE_OUT_OF_RANGE' });
    await assert.rejects(s.getRange('short', -1, 1), { code: 'STORAGE_OUT_OF_RANGE' });
  });

  test('list yields keys with a prefix, in order, with sizes', async (s) => {
    const names = ['layers/sha256/bb', 'layers/sha256/aa', 'layers/x', 'other/1', 'layersz'];
    await Promise.all(names.map((k, i) => s.put(k, Buffer.alloc(i + 1))));
    assert.deepEqual(await keys(s, 'layers/'), [
      'layers/sha256/aa',
      'layers/sha256/bb',
      'layers/x',
    ]);
    assert.deepEqual(await keys(s, 'layers'), [
      'layers/sha256/aa',
      'layers/sha256/bb',
      'layers/x',
      'layersz',
    ]);
    assert.deepEqual(await keys(s), [...names].sort());
    assert.deepEqual(await keys(s, 'nothing/'), []);
    const sizes = new Map<string, number>();
    for await (const b of s.list('other/')) sizes.set(b.key, b.size);
    assert.deepEqual([...sizes], [['other/1', 4]]);
  });

  test('malformed keys are refused', async (s) => {
    for (const key of ['', '/abs', 'a//b', 'a/../b', 'a/./b', 'sp ace', 'trailing/']) {
      await assert.rejects(s.put(key, Buffer.from('x')), { code: 'INVALID_ARGUMENT' }, key);
    }
  });
}
