import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import {
  MEDIA_TYPES,
  envMap,
  layerCompression,
  parseImageConfig,
  parseManifest,
  selectPlatform,
  type ImageIndex,
} from './oci-manifest.js';

const d = (c: string): string => `sha256:${c.repeat(64)}`;
const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const code = (c: string) => (e: unknown) => e instanceof AenvError && e.code === c;

describe('OCI and Docker documents', () => {
  it('knows the layer media types and their compression', () => {
    assert.equal(layerCompression('application/vnd.docker.image.rootfs.diff.tar.gzip'), 'gzip');
    assert.equal(layerCompression('application/vnd.oci.image.layer.v1.tar'), 'none');
    assert.equal(layerCompression('application/vnd.oci.image.layer.v1.tar+gzip'), 'gzip');
    assert.equal(layerCompression('application/vnd.oci.image.layer.v1.tar+zstd'), 'zstd');
    assert.equal(
      layerCompression('application/vnd.oci.image.layer.nondistributable.v1.tar+gzip'),
      'gzip',
    );
    assert.equal(layerCompression('application/vnd.in-toto+json'), undefined);
  });

  it('parses a manifest, taking the media type from the header when absent', () => {
    const m = parseManifest(
      json({
        schemaVersion: 2,
        config: { mediaType: 'x', digest: d('1'), size: 10 },
        layers: [
          { mediaType: 'application/vnd.oci.image.layer.v1.tar+zstd', digest: d('2'), size: 5 },
        ],
      }),
      `${MEDIA_TYPES.ociManifest}; charset=utf-8`,
    );
    assert.equal(m.kind, 'manifest');
    assert.equal(m.mediaType, MEDIA_TYPES.ociManifest);
    assert.equal(m.kind === 'manifest' && m.layers[0]?.compression, 'zstd');
  });

  it('selects linux/amd64 from an index, or says which platforms exist', () => {
    const index = parseManifest(
      json({
        schemaVersion: 2,
        mediaType: MEDIA_TYPES.ociIndex,
        manifests: [
          { digest: d('a'), size: 1, platform: { os: 'linux', architecture: 'arm64' } },
          { digest: d('b'), size: 1, platform: { os: 'linux', architecture: 'amd64' } },
        ],
      }),
      '',
    ) as ImageIndex;
    assert.equal(selectPlatform(index).digest, d('b'));
    assert.throws(
      () => selectPlatform({ ...index, manifests: index.manifests.slice(0, 1) }),
      (e: unknown) => code('IMAGE_UNSUPPORTED')(e) && /linux\/arm64/.test((e as Error).message),
    );
  });

  it('rejects schema 1, foreign media types and garbage', () => {
    assert.throws(() => parseManifest(json({ schemaVersion: 1 }), ''), code('IMAGE_UNSUPPORTED'));
    assert.throws(
      () =>
        parseManifest(
          json({
            schemaVersion: 2,
            config: { digest: d('1'), size: 1 },
            layers: [{ mediaType: 'application/x-helm', digest: d('2'), size: 1 }],
          }),
          '',
        ),
      code('IMAGE_UNSUPPORTED'),
    );
    assert.throws(() => parseManifest(Buffer.from('{not json'), ''), code('IMAGE_INVALID'));
  });

  it('reads the config fields a node uses and checks diff_ids', () => {
    const body = json({
      os: 'linux',
      architecture: 'amd64',
      config: {
        Env: ['PATH=/usr/bin:/bin', 'A=1', 'A=2'],
        WorkingDir: '/srv',
        User: 'app',
        Cmd: ['sh'],
        ExposedPorts: { '8080/tcp': {} },
      },
      rootfs: { type: 'layers', diff_ids: [d('c')] },
    });
    const c = parseImageConfig(body, 1);
    assert.equal(c.workingDir, '/srv');
    assert.equal(c.user, 'app');
    assert.deepEqual(c.cmd, ['sh']);
    assert.deepEqual(c.exposedPorts, ['8080/tcp']);
    assert.deepEqual(envMap(c.env), { PATH: '/usr/bin:/bin', A: '2' });
    assert.throws(() => parseImageConfig(body, 2), code('IMAGE_INVALID'));
    assert.throws(
      () => parseImageConfig(json({ os: 'windows', rootfs: { diff_ids: [] } }), 0),
      code('IMAGE_UNSUPPORTED'),
    );
  });
});
