import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ArtifactStore, canonicalJson } from './artifact-store.js';

describe('ArtifactStore', () => {
  let root = '';
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'aenv-store-'));
  });
  after(async () => rm(root, { recursive: true, force: true }));

  const writer = (content: string, counter: { n: number }) => async (work: string) => {
    counter.n++;
    await writeFile(join(work, 'out.bin'), content);
    return { files: ['out.bin'], meta: { content } };
  };

  it('keys by canonical inputs: key order does not matter, values do', () => {
    const store = new ArtifactStore(root);
    assert.equal(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] }), '{"a":[1,{"c":3,"d":2}],"b":1}');
    assert.equal(store.keyOf({ a: 1, b: 2 }), store.keyOf({ b: 2, a: 1 }));
    assert.notEqual(store.keyOf({ a: 1 }), store.keyOf({ a: 2 }));
  });

  it('builds once, then serves the cache with digests; an input change builds anew', async () => {
    const store = new ArtifactStore(root);
    const counter = { n: 0 };
    const first = await store.ensure('demo', { v: 1 }, writer('one', counter));
    const again = await store.ensure('demo', { v: 1 }, writer('one', counter));
    assert.equal(counter.n, 1);
    assert.equal(first.cached, false);
    assert.equal(again.cached, true);
    assert.equal(again.artifact.dir, first.artifact.dir);
    assert.equal(
      again.artifact.files['out.bin']?.sha256,
      'sha256:7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed',
    );
    assert.equal(await readFile(again.artifact.files['out.bin']?.path ?? '', 'utf8'), 'one');
    const changed = await store.ensure('demo', { v: 2 }, writer('two', counter));
    assert.equal(counter.n, 2);
    assert.notEqual(changed.artifact.dir, first.artifact.dir);
  });

  it('lets concurrent callers share one build', async () => {
    const store = new ArtifactStore(root, { pollMs: 10 });
    const counter = { n: 0 };
    const slow = async (work: string) => {
      await new Promise((r) => setTimeout(r, 100));
      return writer('x', counter)(work);
    };
    const [a, b] = await Promise.all([
      store.ensure('par', {}, slow),
      store.ensure('par', {}, slow),
    ]);
    assert.equal(counter.n, 1);
    assert.equal(a.artifact.dir, b.artifact.dir);
  });

  it('leaves nothing behind when a build fails, and rebuilds a damaged artifact', async () => {
    const store = new ArtifactStore(root);
    await assert.rejects(
      store.ensure('fail', {}, async (work) => {
        await writeFile(join(work, 'half'), 'x');
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.deepEqual(
      (await readdir(root)).filter((n) => n.includes('fail')),
      [],
    );
    const counter = { n: 0 };
    const built = await store.ensure('dmg', {}, writer('abc', counter));
    await writeFile(built.artifact.files['out.bin']?.path ?? '', 'abcd');
    assert.equal(await store.get('dmg', {}), undefined);
    await store.ensure('dmg', {}, writer('abc', counter));
    assert.equal(counter.n, 2);
  });

  it('takes over a lock whose owner died, and gives up on a live one with GUEST_CACHE_BUSY', async () => {
    const store = new ArtifactStore(root, { pollMs: 10, lockTimeoutMs: 200 });
    const key = store.keyOf({ l: 1 });
    await writeFile(join(root, `stale-${key}.lock`), '999999999');
    const counter = { n: 0 };
    await store.ensure('stale', { l: 1 }, writer('s', counter));
    assert.equal(counter.n, 1);
    await writeFile(join(root, `busy-${key}.lock`), String(process.pid));
    await assert.rejects(
      store.ensure('busy', { l: 1 }, writer('b', counter)),
      (e: Error & { code?: string }) => e.code === 'GUEST_CACHE_BUSY',
    );
  });
});
