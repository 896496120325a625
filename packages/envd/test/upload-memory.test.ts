/**
 * A 1 GiB upload streams to disk: envd's resident memory stays far below
 * the upload's size while it runs (envd in its own process, measured from
 * /proc).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ENVD_BUNDLE_DIR } from '../src/index.js';
import { startFixture, type EnvdFixture } from './helpers/envd-fixture.js';
import { rssOf, spawnEnvd, type EnvdProcess } from './helpers/envd-process.js';

const SIZE = 1 << 30;
const CHUNK = 1 << 20;

describe('large uploads', () => {
  let fx: EnvdFixture;
  let envd: EnvdProcess;
  before(async () => {
    fx = await startFixture();
    const bundle = join(ENVD_BUNDLE_DIR, 'envd.mjs');
    const entry = existsSync(bundle) ? bundle : new URL('../src/main.js', import.meta.url).pathname;
    envd = await spawnEnvd(entry, fx.dir, fx.dir);
  });
  after(async () => {
    await envd?.stop();
    await fx?.close();
  });

  it('streams 1 GiB to disk without holding it in memory', async () => {
    const pid = envd.child.pid ?? 0;
    const before = await rssOf(pid);
    let peak = before;
    const sampler = setInterval(() => {
      rssOf(pid).then(
        (rss) => (peak = Math.max(peak, rss)),
        () => {},
      );
    }, 50);
    const chunk = Buffer.alloc(CHUNK, 7);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= SIZE) return controller.close();
        controller.enqueue(chunk);
        sent += CHUNK;
      },
    });
    try {
      const res = await fetch(`${envd.url}/files?path=big.bin`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/octet-stream' },
        duplex: 'half',
      });
      assert.equal(res.status, 200);
    } finally {
      clearInterval(sampler);
    }
    assert.equal(statSync(join(fx.home, 'big.bin')).size, SIZE);
    const growth = peak - before;
    console.log(
      `envd RSS ${(before / 2 ** 20).toFixed(1)} MiB before, peak ${(peak / 2 ** 20).toFixed(1)} MiB during a 1 GiB upload`,
    );
    assert.ok(growth < 128 * 2 ** 20, `RSS grew by ${(growth / 2 ** 20).toFixed(1)} MiB`);
  });
});
