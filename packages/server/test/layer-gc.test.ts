// Layer garbage collection against a real local blob store: what is
// referenced or recent stays, what is neither goes, and a randomized run
// never deletes a referenced layer.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FsBlobStore, layerKey } from '@aenv/storage';
import { LayerGc } from '../src/storage/layer-gc.js';

const dir = mkdtempSync(join(tmpdir(), 'aenv-gc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function digestOf(n: number): string {
  return `sha256:${createHash('sha256').update(`layer-${n}`).digest('hex')}`;
}

async function present(store: FsBlobStore, digests: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const d of digests) if ((await store.head(layerKey(d))) !== undefined) out.add(d);
  return out;
}

describe('LayerGc', () => {
  it('deletes exactly the layers that are neither referenced nor recent', async () => {
    const store = new FsBlobStore(join(dir, 'a'));
    const all = [1, 2, 3, 4, 5, 6].map(digestOf);
    for (const d of all) await store.put(layerKey(d), Buffer.from(d));
    await store.put('other/keep-me', Buffer.from('not a layer'));
    const gc = new LayerGc({
      store,
      references: () => new Set([all[0] as string, all[1] as string]),
      recent: () => new Set([all[2] as string]),
    });
    const deleted = await gc.collect();
    assert.deepEqual(new Set(deleted), new Set(all.slice(3)));
    assert.deepEqual(await present(store, all), new Set(all.slice(0, 3)));
    assert.ok((await store.head('other/keep-me')) !== undefined, 'only layers are collected');
  });

  it('once stopped, waits for a collection in flight and schedules no more', async () => {
    const store = new FsBlobStore(join(dir, 'c'));
    await store.put(layerKey(digestOf(9)), Buffer.from('x'));
    let reads = 0;
    const gc = new LayerGc({
      store,
      references: () => {
        reads++;
        return new Set();
      },
      recent: () => new Set(),
    });
    const running = gc.collect();
    await gc.stop();
    assert.deepEqual(await running, [digestOf(9)], 'the collection in flight finished first');
    gc.schedule(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(reads, 1, 'no collection after stop');
  });

  it('never deletes a referenced layer under random references and concurrent runs', async () => {
    const store = new FsBlobStore(join(dir, 'b'));
    const all = Array.from({ length: 40 }, (_, i) => digestOf(100 + i));
    let refs = new Set<string>();
    const gc = new LayerGc({ store, references: () => refs, recent: () => new Set() });
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 30; round++) {
      for (const d of all) if (rand() < 0.3) await store.put(layerKey(d), Buffer.from(d));
      refs = new Set(all.filter(() => rand() < 0.5));
      const before = await present(store, all);
      await Promise.all([gc.collect(), gc.collect()]);
      const afterSet = await present(store, all);
      for (const d of refs)
        assert.equal(afterSet.has(d), before.has(d), `round ${round}: a referenced layer changed`);
      for (const d of afterSet)
        assert.ok(refs.has(d), `round ${round}: an unreferenced layer survived`);
    }
  });
});
