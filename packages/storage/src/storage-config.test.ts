import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError, loadConfig } from '@aenv/shared';
import { resolveStorageSettings, storageConfigSchema } from './storage-config.js';

const load = (env: Record<string, string>) =>
  resolveStorageSettings(loadConfig(storageConfigSchema, { env, cwd: '/srv' }), '/var/lib/aenv');

const invalidKey = (key: string) => (err: unknown) =>
  err instanceof AenvError && err.code === 'CONFIG_INVALID_VALUE' && err.fields.key === key;

describe('storage config', () => {
  it('defaults to a directory store and a cache under the home directory', () => {
    assert.deepEqual(load({}), {
      store: { kind: 'fs', root: '/var/lib/aenv/blobs' },
      cache: { dir: '/var/lib/aenv/cache', budgetBytes: 4096 * 2 ** 20 },
    });
  });

  it('resolves relative paths and the budget from the environment', () => {
    const s = load({
      AENV_STORAGE_FS_ROOT: 'layers',
      AENV_STORAGE_CACHE_DIR: '/fast/cache',
      AENV_STORAGE_CACHE_MIB: '64',
    });
    assert.deepEqual(s.store, { kind: 'fs', root: '/srv/layers' });
    assert.deepEqual(s.cache, { dir: '/fast/cache', budgetBytes: 64 * 2 ** 20 });
  });

  it('maps the s3 fields onto an S3 blob store spec', () => {
    const s = load({
      AENV_STORAGE_BLOB_STORE: 's3',
      AENV_STORAGE_S3_BUCKET: 'layers',
      AENV_STORAGE_S3_PREFIX: 'node1/',
      AENV_STORAGE_S3_ENDPOINT: 'http://127.0.0.1:9000',
      AENV_STORAGE_S3_ADDRESSING: 'virtual-host',
      AENV_STORAGE_S3_ACCESS_KEY_ID: 'AK',
      AENV_STORAGE_S3_SECRET_ACCESS_KEY: 'SK',
    });
    assert.deepEqual(s.store, {
      kind: 's3',
      bucket: 'layers',
      prefix: 'node1/',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: false,
      credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' },
    });
  });

  it('leaves addressing and credentials to the S3 client when unset', () => {
    const s = load({ AENV_STORAGE_BLOB_STORE: 's3', AENV_STORAGE_S3_BUCKET: 'b' });
    assert.deepEqual(s.store, { kind: 's3', bucket: 'b', prefix: '', region: 'us-east-1' });
  });

  it('names the key of each semantic error', () => {
    assert.throws(() => load({ AENV_STORAGE_BLOB_STORE: 's3' }), invalidKey('storage.s3.bucket'));
    assert.throws(
      () =>
        load({
          AENV_STORAGE_BLOB_STORE: 's3',
          AENV_STORAGE_S3_BUCKET: 'b',
          AENV_STORAGE_S3_ACCESS_KEY_ID: 'AK',
        }),
      invalidKey('storage.s3.secretAccessKey'),
    );
    assert.throws(
      () =>
        load({
          AENV_STORAGE_BLOB_STORE: 's3',
          AENV_STORAGE_S3_BUCKET: 'b',
          AENV_STORAGE_S3_ENDPOINT: 'minio:9000',
        }),
      invalidKey('storage.s3.endpoint'),
    );
    assert.throws(() => load({ AENV_STORAGE_CACHE_MIB: '1' }), invalidKey('cache.budgetMiB'));
  });
});
