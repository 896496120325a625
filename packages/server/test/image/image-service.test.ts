// Pulling and converting images for real: a local registry with token auth
// (behind a counting, fault-injecting proxy), conversion on this host (loop
// mounts, ext4), layers in a real blob store. The converted disks are
// checked by mounting them read-only: files present, deleted files absent,
// modes and owners kept; shared base layers are downloaded and converted
// once (counted); failures leave nothing behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { FsBlobStore, layerKey, type ImageSpec } from '@aenv/storage';
import { mountsUnder } from '../../src/image/ext4-volume.js';
import { ImageService } from '../../src/image/image-service.js';
import type { ImageConfigSection } from '../../src/image/image-settings.js';
import { materializeStack } from '../../src/image/stack-file.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import {
  pushImage,
  registryUnavailable,
  startLocalRegistry,
  type LocalRegistry,
} from '../../src/testing/local-registry.js';
import { buildTestImages, type TestImages } from '../../src/testing/test-images.js';

const skip =
  registryUnavailable() ?? (process.getuid?.() === 0 ? undefined : 'needs root (loop mounts)');
const code = (c: string) => (e: unknown) => e instanceof AenvError && e.code === c;

describe('pulling and converting images', { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), 'aenv-images-'));
  const home = join(work, 'home');
  const store = new FsBlobStore(join(work, 'blobs'));
  let images: TestImages;
  let reg: LocalRegistry;
  let proxy: FaultProxy;
  let service: ImageService;
  const mounted: string[] = [];

  function settings(): ImageConfigSection {
    const dockerConfig = join(work, 'docker.json');
    const auth = Buffer.from(`${reg.user}:${reg.password}`).toString('base64');
    writeFileSync(dockerConfig, JSON.stringify({ auths: { [proxy.host]: { auth } } }));
    return {
      allowedRegistries: [proxy.host],
      insecureRegistries: [proxy.host],
      dockerConfig,
      diskSizeMiB: 256,
      retries: 2,
      timeoutSeconds: 10,
      downloadConcurrency: 3,
    };
  }

  /** Mounts a converted disk read-only; returns the mount point. */
  async function mountImage(image: ImageSpec, name: string): Promise<string> {
    const raw = join(work, `${name}.raw`);
    await materializeStack(store, image, raw);
    execFileSync('e2fsck', ['-fn', raw], { stdio: 'ignore' });
    const mnt = join(work, `${name}.mnt`);
    mkdirSync(mnt);
    execFileSync('mount', ['-o', 'loop,ro', raw, mnt]);
    mounted.push(mnt);
    return mnt;
  }

  before(async () => {
    images = buildTestImages(work);
    reg = await startLocalRegistry('token');
    proxy = await startFaultProxy(reg.host);
    for (const tag of ['multi', 'sibling', 'base'])
      await pushImage(reg, `oci:${images.layout}:${tag}`, `test/${tag}:1`);
    // The same image with zstd layers: other blobs, the same diff_ids.
    execFileSync('skopeo', [
      'copy',
      '--quiet',
      '--dest-compress-format',
      'zstd',
      `oci:${images.layout}:multi`,
      `oci:${work}/zstd:multi`,
    ]);
    await pushImage(reg, `oci:${work}/zstd:multi`, 'test/multi-zstd:1');
    service = await ImageService.start({ settings: settings(), store, home });
  });

  after(async () => {
    for (const m of mounted.reverse()) execFileSync('umount', [m]);
    await proxy?.close();
    await reg?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('converts a multi-layer image with whiteouts: the filesystem matches the image', async (ctx) => {
    const events: string[] = [];
    const t0 = performance.now();
    const pulled = await service.pull(`${proxy.host}/test/multi:1`, {
      onProgress: (e) => events.push(`${e.stage} ${e.phase ?? ''} ${e.status}`),
    });
    ctx.diagnostic(
      `multi (3 layers) pulled and converted in ${Math.round(performance.now() - t0)} ms`,
    );
    assert.equal(pulled.image.layers.length, 4, 'the empty filesystem + 3 OCI layers');
    assert.equal(pulled.downloaded, 3);
    assert.equal(pulled.converted, 4);
    assert.deepEqual(pulled.config.env, ['PATH=/usr/bin:/bin', 'GREETING=hello from the image']);
    assert.equal(pulled.config.workingDir, '/data');
    assert.ok(
      events.some((e) => /^layer 1\/3 \w+ download start$/.test(e)),
      events.join('\n'),
    );
    assert.ok(events.some((e) => /^layer 3\/3 \w+ convert done$/.test(e)));
    const root = await mountImage(pulled.image, 'multi');
    assert.equal(readFileSync(join(root, 'top.txt'), 'utf8'), 'multi top\n');
    assert.equal(readFileSync(join(root, 'data/keep'), 'utf8'), 'data/keep\n');
    assert.equal(existsSync(join(root, 'data/gone')), false, 'whiteout applied');
    assert.deepEqual(readdirSync(join(root, 'opaque')), ['c'], 'opaque directory applied');
    const owned = statSync(join(root, 'home/user/owned.txt'));
    assert.deepEqual([owned.uid, owned.gid, owned.mode & 0o7777], [1000, 1000, 0o640]);
    const added = statSync(join(root, 'added.txt'));
    assert.deepEqual([added.uid, added.mode & 0o7777], [1000, 0o600]);
    const setuid = statSync(join(root, 'opt/setuid'));
    assert.equal(setuid.mode & 0o7777, 0o4755);
    assert.equal(statSync(join(root, 'opt/hardlink')).ino, setuid.ino, 'hard link kept');
    assert.equal(readlinkSync(join(root, 'opt/symlink')), '/opt/setuid');
    assert.equal(statSync(join(root, 'tmp')).mode & 0o7777, 0o1777);
    assert.equal(readlinkSync(join(root, 'bin/sh')), 'busybox');
    assert.ok(lstatSync(join(root, 'bin/busybox')).size > 100_000);
  });

  it('downloads and converts only its own layer for an image sharing base layers', async (ctx) => {
    proxy.blobRequests.length = 0;
    const before = service.stats.layersConverted;
    const t0 = performance.now();
    const pulled = await service.pull(`${proxy.host}/test/sibling:1`);
    ctx.diagnostic(
      `sibling: ${pulled.downloaded} of 3 layers downloaded, ${pulled.converted} converted, ` +
        `in ${Math.round(performance.now() - t0)} ms`,
    );
    assert.equal(pulled.downloaded, 1);
    assert.equal(pulled.converted, 1);
    assert.equal(service.stats.layersConverted - before, 1);
    // The config and the one new layer: nothing of the shared layers.
    assert.equal(proxy.blobRequests.length, 2, proxy.blobRequests.join(', '));
    const root = await mountImage(pulled.image, 'sibling');
    assert.equal(readFileSync(join(root, 'other.txt'), 'utf8'), 'sibling top\n');
    assert.equal(existsSync(join(root, 'top.txt')), false);
    assert.equal(existsSync(join(root, 'data/gone')), false);
  });

  it('reuses conversions across compressions and pulls', async (ctx) => {
    proxy.blobRequests.length = 0;
    const t0 = performance.now();
    const zstd = await service.pull(`${proxy.host}/test/multi-zstd:1`);
    ctx.diagnostic(`multi-zstd (same diff_ids): ${Math.round(performance.now() - t0)} ms`);
    assert.equal(zstd.downloaded, 0, 'same diff_ids: nothing to download');
    assert.equal(zstd.converted, 0);
    const again = await service.pull(`${proxy.host}/test/multi:1`);
    assert.equal(again.converted, 0);
    assert.deepEqual(
      proxy.blobRequests.filter((b) => !b.includes('@')).length,
      1,
      'only the zstd config',
    );
    const base = await service.pull(`${proxy.host}/test/base:1`);
    assert.equal(base.converted, 0, 'a prefix of a converted chain is converted');
    assert.ok(service.layers().has(base.image.layers[1] as string));
  });

  it('grows a disk with one cached layer', async () => {
    const pulled = await service.pull(`${proxy.host}/test/base:1`);
    const grown = await service.resize(pulled.image, 512 * 2 ** 20);
    assert.equal(grown.virtualSize, 512 * 2 ** 20);
    assert.equal(grown.layers.length, pulled.image.layers.length + 1);
    const again = await service.resize(pulled.image, 512 * 2 ** 20);
    assert.deepEqual(again, grown);
    const raw = join(work, 'grown.raw');
    await materializeStack(store, grown, raw);
    execFileSync('e2fsck', ['-fn', raw], { stdio: 'ignore' });
    const info = execFileSync('dumpe2fs', ['-h', raw], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    const blocks = Number(/Block count:\s+(\d+)/.exec(info)?.[1]);
    assert.equal(blocks * 4096, 512 * 2 ** 20);
    await assert.rejects(service.resize(grown, 256 * 2 ** 20), code('INVALID_ARGUMENT'));
  });

  describe('failures leave nothing behind', () => {
    async function assertClean(): Promise<void> {
      assert.deepEqual(await mountsUnder(join(home, 'images')), [], 'no mounts');
      assert.deepEqual(readdirSync(join(home, 'images', 'work')), [], 'no work files');
      const loops = execFileSync('losetup', ['-l', '-n', '-O', 'BACK-FILE']).toString();
      assert.ok(!loops.includes(home), 'no loop devices');
    }

    async function chains(): Promise<number> {
      let n = 0;
      for await (const _ of store.list('images/chains/')) n++;
      return n;
    }

    it('IMAGE_NOT_FOUND for a missing tag', async () => {
      await assert.rejects(
        service.pull(`${proxy.host}/test/multi:missing`),
        code('IMAGE_NOT_FOUND'),
      );
      await assertClean();
    });

    it('IMAGE_DIGEST_MISMATCH for a corrupted layer, and no layer cached for it', async () => {
      await pushImage(reg, `oci:${images.layout}:multi`, 'test/bad:1');
      execFileSync('umoci', [
        'raw',
        'add-layer',
        '--image',
        `${images.layout}:multi`,
        '--tag',
        'extra',
        join(work, 'other.txt.tar'),
      ]);
      await pushImage(reg, `oci:${images.layout}:extra`, 'test/extra:1');
      const manifest = JSON.parse(
        execFileSync('skopeo', ['inspect', '--raw', `oci:${images.layout}:extra`]).toString(),
      ) as { layers: { digest: string }[] };
      const top = manifest.layers[3]?.digest as string;
      const before = await chains();
      proxy.faults = { corrupt: top };
      await assert.rejects(
        service.pull(`${proxy.host}/test/extra:1`),
        code('IMAGE_DIGEST_MISMATCH'),
      );
      proxy.faults = {};
      assert.equal(await chains(), before, 'no chain record for the failed layer');
      await assertClean();
    });

    it('IMAGE_REGISTRY_UNAVAILABLE when the connection keeps breaking mid-blob', async () => {
      const manifest = JSON.parse(
        execFileSync('skopeo', ['inspect', '--raw', `oci:${images.layout}:extra`]).toString(),
      ) as { layers: { digest: string }[] };
      proxy.faults = {
        reset: { digest: manifest.layers[3]?.digest as string, afterBytes: 10, times: 100 },
      };
      const layers = [...service.layers()];
      await assert.rejects(
        service.pull(`${proxy.host}/test/extra:1`),
        code('IMAGE_REGISTRY_UNAVAILABLE'),
      );
      proxy.faults = {};
      assert.deepEqual([...service.layers()], layers);
      await assertClean();
      // With the network back, the same pull converts just that layer.
      const ok = await service.pull(`${proxy.host}/test/extra:1`);
      assert.equal(ok.converted, 1);
      assert.ok((await store.head(layerKey(ok.image.layers[4] as string))) !== undefined);
    });

    it('refuses registries outside the allow-list', async () => {
      await assert.rejects(
        service.pull('docker.io/library/ubuntu:24.04'),
        code('IMAGE_REGISTRY_NOT_ALLOWED'),
      );
    });

    it('cleans what a killed conversion left at the next start', async () => {
      const dead = join(home, 'images', 'work', 'deadbeef');
      mkdirSync(join(dead, 'mnt'), { recursive: true });
      execFileSync('truncate', ['-s', '64M', join(dead, 'disk.raw')]);
      execFileSync('mkfs.ext4', ['-q', '-F', join(dead, 'disk.raw')]);
      execFileSync('mount', ['-o', 'loop', join(dead, 'disk.raw'), join(dead, 'mnt')]);
      const restarted = await ImageService.start({ settings: settings(), store, home });
      assert.equal(restarted.leftovers.mounts, 1);
      await assertClean();
      assert.ok(
        restarted.layers().size >= service.layers().size - 1,
        'converted images are known again',
      );
    });
  });
});
