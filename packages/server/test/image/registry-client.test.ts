// The OCI Distribution client against a REAL registry (Debian's
// docker-registry) on loopback: token auth through a token service, Basic
// auth, Docker v2 and OCI media types, an index, and the failures a network
// and a registry produce (404, 401, a reset mid-blob, a corrupted blob).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { parseImageReference } from '../../src/image/image-reference.js';
import { MEDIA_TYPES } from '../../src/image/oci-manifest.js';
import { RegistryClient } from '../../src/image/registry-client.js';
import { dockerConfigCredentials } from '../../src/image/registry-credentials.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import {
  pushImage,
  registryUnavailable,
  startLocalRegistry,
  type LocalRegistry,
} from '../../src/testing/local-registry.js';
import { buildTestImages, type TestImages } from '../../src/testing/test-images.js';

const skip =
  registryUnavailable() ??
  (process.getuid?.() === 0 ? undefined : 'needs root (test images have owners)');
const FAST = { retries: 3, backoffMs: 20, maxBackoffMs: 100, timeoutMs: 5000 };
const code = (c: string) => (e: unknown) => e instanceof AenvError && e.code === c;

/** A client of `reg`; `dockerConfig` is a Docker config file with credentials. */
function client(reg: { host: string }, dockerConfig: string | undefined) {
  return new RegistryClient({
    insecureRegistries: [reg.host],
    credentials:
      dockerConfig === undefined
        ? () => Promise.resolve(undefined)
        : dockerConfigCredentials(dockerConfig),
    retry: FAST,
  });
}

describe('the registry client', { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), 'aenv-registry-client-'));
  let images: TestImages;
  const started: { close(): Promise<void> }[] = [];
  before(() => {
    images = buildTestImages(work);
  });
  after(async () => {
    for (const s of started.reverse()) await s.close();
    rmSync(work, { recursive: true, force: true });
  });

  function dockerConfig(name: string, reg: LocalRegistry, password = reg.password): string {
    const file = join(work, `${name}.json`);
    const auth = Buffer.from(`${reg.user}:${password}`).toString('base64');
    writeFileSync(file, JSON.stringify({ auths: { [`http://${reg.host}`]: { auth } } }));
    return file;
  }

  async function fetchAll(c: RegistryClient, image: string) {
    const ref = parseImageReference(image);
    const resolved = await c.resolve(ref);
    const config = JSON.parse((await c.readBlob(ref, resolved.manifest.config)).toString()) as {
      rootfs: { diff_ids: string[] };
    };
    for (const layer of resolved.manifest.layers) {
      const file = join(work, layer.digest.slice(7));
      await c.downloadBlob(ref, layer, file);
      const got = createHash('sha256').update(readFileSync(file)).digest('hex');
      assert.equal(`sha256:${got}`, layer.digest);
      rmSync(file);
    }
    return { resolved, config };
  }

  it('pulls through the Bearer token flow with credentials from a Docker config', async () => {
    const reg = await startLocalRegistry('token');
    started.push(reg);
    await pushImage(reg, `oci:${images.layout}:multi`, 'app/multi:1');
    await pushImage(reg, `oci:${images.layout}:multi`, 'app/multi:docker', { format: 'v2s2' });
    const c = client(reg, dockerConfig('token', reg));
    const oci = await fetchAll(c, `${reg.host}/app/multi:1`);
    assert.equal(oci.resolved.manifest.mediaType, MEDIA_TYPES.ociManifest);
    assert.equal(oci.resolved.manifest.layers.length, 3);
    assert.equal(oci.config.rootfs.diff_ids.length, 3);
    const docker = await fetchAll(c, `${reg.host}/app/multi:docker`);
    assert.equal(docker.resolved.manifest.mediaType, MEDIA_TYPES.dockerManifest);
    assert.equal(docker.resolved.manifest.layers[0]?.compression, 'gzip');
    // One token per scope, reused for every request of the scope (skopeo's pushes asked for pull,push).
    const ours = reg.tokenRequests.filter((t) => t.scope === 'repository:app/multi:pull');
    assert.equal(ours.length, 1, JSON.stringify(reg.tokenRequests));
    assert.equal(ours[0]?.user, reg.user);

    await assert.rejects(
      client(reg, dockerConfig('wrong', reg, 'nope')).resolve(
        parseImageReference(`${reg.host}/app/multi:1`),
      ),
      code('IMAGE_REGISTRY_DENIED'),
    );
    await assert.rejects(
      client(reg, undefined).resolve(parseImageReference(`${reg.host}/app/multi:1`)),
      code('IMAGE_REGISTRY_DENIED'),
    );
  });

  it('pulls with Basic auth, and is denied without credentials', async () => {
    const reg = await startLocalRegistry('basic');
    started.push(reg);
    await pushImage(reg, `oci:${images.layout}:base`, 'busy:1');
    const ok = await fetchAll(client(reg, dockerConfig('basic', reg)), `${reg.host}/busy:1`);
    assert.equal(ok.resolved.manifest.layers.length, 1);
    await assert.rejects(
      client(reg, undefined).resolve(parseImageReference(`${reg.host}/busy:1`)),
      code('IMAGE_REGISTRY_DENIED'),
    );
    await assert.rejects(
      client(reg, dockerConfig('bad', reg, 'x')).resolve(parseImageReference(`${reg.host}/busy:1`)),
      code('IMAGE_REGISTRY_DENIED'),
    );
  });

  describe('failures (an open registry behind a fault proxy)', () => {
    let reg: LocalRegistry;
    let proxy: FaultProxy;
    before(async () => {
      reg = await startLocalRegistry('none');
      started.push(reg);
      proxy = await startFaultProxy(reg.host);
      started.push(proxy);
      await pushImage(reg, `oci:${images.layout}:multi`, 'multi:1');
    });

    it('says IMAGE_NOT_FOUND for a missing repository or tag', async () => {
      const c = client(proxy, undefined);
      await assert.rejects(
        c.resolve(parseImageReference(`${proxy.host}/multi:nope`)),
        code('IMAGE_NOT_FOUND'),
      );
      await assert.rejects(
        c.resolve(parseImageReference(`${proxy.host}/nothing:1`)),
        code('IMAGE_NOT_FOUND'),
      );
    });

    it('resumes a blob whose connection was reset mid-body, with a Range request', async () => {
      const c = client(proxy, undefined);
      const ref = parseImageReference(`${proxy.host}/multi:1`);
      const { manifest } = await c.resolve(ref);
      const big = manifest.layers[0];
      assert.ok(big !== undefined && big.size > 100_000);
      proxy.faults = { reset: { digest: big.digest, afterBytes: 50_000, times: 1 } };
      proxy.blobRequests.length = 0;
      const file = join(work, 'resumed');
      await c.downloadBlob(ref, big, file);
      assert.equal(readFileSync(file).length, big.size);
      assert.deepEqual(proxy.blobRequests, [big.digest, `${big.digest}@range`]);
      assert.equal(c.stats.retries, 1);
      rmSync(file);
    });

    it('gives up with IMAGE_REGISTRY_UNAVAILABLE when resets go on, leaving no file', async () => {
      const c = client(proxy, undefined);
      const ref = parseImageReference(`${proxy.host}/multi:1`);
      const big = (await c.resolve(ref)).manifest.layers[0];
      assert.ok(big !== undefined);
      proxy.faults = { reset: { digest: big.digest, afterBytes: 1000, times: 100 } };
      const file = join(work, 'broken');
      await assert.rejects(c.downloadBlob(ref, big, file), code('IMAGE_REGISTRY_UNAVAILABLE'));
      assert.equal(existsSync(file), false);
      proxy.faults = { unavailable: { digest: big.digest, times: 100 } };
      await assert.rejects(c.downloadBlob(ref, big, file), code('IMAGE_REGISTRY_UNAVAILABLE'));
      proxy.faults = {};
    });

    it('rejects a corrupted blob with IMAGE_DIGEST_MISMATCH, leaving no file', async () => {
      const c = client(proxy, undefined);
      const ref = parseImageReference(`${proxy.host}/multi:1`);
      const layer = (await c.resolve(ref)).manifest.layers[1];
      assert.ok(layer !== undefined);
      proxy.faults = { corrupt: layer.digest };
      const file = join(work, 'corrupt');
      await assert.rejects(c.downloadBlob(ref, layer, file), code('IMAGE_DIGEST_MISMATCH'));
      assert.equal(existsSync(file), false);
      proxy.faults = {};
    });

    it('resolves an index to its linux/amd64 manifest', async () => {
      const c = client(proxy, undefined);
      const { digest } = await c.resolve(parseImageReference(`${proxy.host}/multi:1`));
      const size = (
        await fetch(`http://${reg.host}/v2/multi/manifests/1`, {
          headers: { accept: MEDIA_TYPES.ociManifest },
        }).then((r) => r.arrayBuffer())
      ).byteLength;
      const index = {
        schemaVersion: 2,
        mediaType: MEDIA_TYPES.ociIndex,
        manifests: [
          {
            mediaType: MEDIA_TYPES.ociManifest,
            digest,
            size,
            platform: { os: 'linux', architecture: 'amd64' },
          },
        ],
      };
      const put = await fetch(`http://${reg.host}/v2/multi/manifests/index`, {
        method: 'PUT',
        headers: { 'content-type': MEDIA_TYPES.ociIndex },
        body: JSON.stringify(index),
      });
      assert.equal(put.status, 201, await put.text());
      const viaIndex = await c.resolve(parseImageReference(`${proxy.host}/multi:index`));
      assert.equal(viaIndex.digest, digest);
    });
  });
});
