/**
 * The `storage` section of the node daemon's configuration (style R7): the
 * blob store the node's layers live in (a local directory or an
 * S3-compatible bucket) and the local chunk cache in front of it. The
 * schema checks types; {@link resolveStorageSettings} checks what types
 * cannot express (an S3 store needs a bucket, credentials come in pairs)
 * and fills in the defaults that live under the daemon's home directory.
 *
 * @module
 */
import { join } from 'node:path';
import { AenvError, field, type ConfigSchema, type ResolvedConfig } from '@aenv/shared';
import type { BlobStoreSpec } from './blob/create-blob-store.js';

/** How an S3 endpoint is addressed: `auto` is path-style with a custom endpoint, else virtual-host. */
export const S3_ADDRESSING_CHOICES = ['auto', 'path', 'virtual-host'] as const;

/** The schema of the `storage` section. */
export const storageConfigSchema = {
  blobStore: field.oneOf(['fs', 's3'], {
    default: 'fs',
    env: 'AENV_STORAGE_BLOB_STORE',
    doc: 'Where layers live: fs (a local directory) or s3 (an S3-compatible bucket).',
  }),
  fs: {
    root: field.optionalPath({
      default: undefined,
      env: 'AENV_STORAGE_FS_ROOT',
      doc: 'Directory of the fs blob store; default $AENV_HOME/blobs.',
    }),
  },
  s3: {
    bucket: field.optionalString({
      default: undefined,
      env: 'AENV_STORAGE_S3_BUCKET',
      doc: 'Bucket of the s3 blob store (required when blobStore is s3).',
    }),
    prefix: field.string({
      default: '',
      env: 'AENV_STORAGE_S3_PREFIX',
      doc: 'Prefix of every key inside the bucket, e.g. aenv/.',
    }),
    endpoint: field.optionalString({
      default: undefined,
      env: 'AENV_STORAGE_S3_ENDPOINT',
      doc: 'Endpoint URL of an S3-compatible server (MinIO, Ceph RGW...); unset = AWS.',
    }),
    region: field.string({
      default: 'us-east-1',
      env: 'AENV_STORAGE_S3_REGION',
      doc: 'Region of the bucket.',
    }),
    addressing: field.oneOf(S3_ADDRESSING_CHOICES, {
      default: 'auto',
      env: 'AENV_STORAGE_S3_ADDRESSING',
      doc: 'path (endpoint/bucket/key), virtual-host (bucket.endpoint/key) or auto (path with a custom endpoint).',
    }),
    accessKeyId: field.optionalString({
      default: undefined,
      env: 'AENV_STORAGE_S3_ACCESS_KEY_ID',
      doc: "Static access key id; unset = the AWS SDK's provider chain (AWS_* variables, profiles, instance roles).",
    }),
    secretAccessKey: field.optionalString({
      default: undefined,
      env: 'AENV_STORAGE_S3_SECRET_ACCESS_KEY',
      doc: 'Secret of the static access key.',
    }),
    sessionToken: field.optionalString({
      default: undefined,
      env: 'AENV_STORAGE_S3_SESSION_TOKEN',
      doc: 'Session token of temporary static credentials.',
    }),
  },
  cache: {
    dir: field.optionalPath({
      default: undefined,
      env: 'AENV_STORAGE_CACHE_DIR',
      doc: 'Directory of the local chunk cache of remote layers; default $AENV_HOME/cache.',
    }),
    budgetMiB: field.integer({
      default: 4096,
      min: 16,
      max: 16 * 1024 * 1024,
      env: 'AENV_STORAGE_CACHE_MIB',
      doc: 'Most MiB of layer chunks the cache keeps on local disk (least recently used go first).',
    }),
  },
} as const satisfies ConfigSchema;

/** The loaded `storage` section. */
export type StorageConfig = ResolvedConfig<typeof storageConfigSchema>;

/** The `storage` section after semantic checks, with defaults resolved. */
export interface StorageSettings {
  /** The blob store, as the JSON-safe spec the NBD worker and tools build it from. */
  readonly store: BlobStoreSpec;
  /** The chunk cache. */
  readonly cache: { readonly dir: string; readonly budgetBytes: number };
}

function bad(key: string, message: string): AenvError {
  return new AenvError('CONFIG_INVALID_VALUE', `config key 'storage.${key}': ${message}`, {
    fields: { key: `storage.${key}` },
  });
}

function s3Spec(s3: StorageConfig['s3']): BlobStoreSpec {
  if (s3.bucket === undefined || s3.bucket === '') {
    throw bad('s3.bucket', "a bucket is required when storage.blobStore is 's3'");
  }
  if ((s3.accessKeyId === undefined) !== (s3.secretAccessKey === undefined)) {
    throw bad(
      's3.secretAccessKey',
      'accessKeyId and secretAccessKey are set together or not at all',
    );
  }
  if (s3.endpoint !== undefined && !/^https?:\/\/[^/]/.test(s3.endpoint)) {
    throw bad('s3.endpoint', `expected an http(s) URL, got '${s3.endpoint}'`);
  }
  const credentials =
    s3.accessKeyId === undefined || s3.secretAccessKey === undefined
      ? undefined
      : {
          accessKeyId: s3.accessKeyId,
          secretAccessKey: s3.secretAccessKey,
          ...(s3.sessionToken === undefined ? {} : { sessionToken: s3.sessionToken }),
        };
  return {
    kind: 's3',
    bucket: s3.bucket,
    prefix: s3.prefix,
    region: s3.region,
    ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
    ...(s3.addressing === 'auto' ? {} : { forcePathStyle: s3.addressing === 'path' }),
    ...(credentials === undefined ? {} : { credentials }),
  };
}

/**
 * Checks a loaded `storage` section and resolves its defaults against the
 * daemon's home directory.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` naming the key.
 */
export function resolveStorageSettings(config: StorageConfig, home: string): StorageSettings {
  const store: BlobStoreSpec =
    config.blobStore === 's3'
      ? s3Spec(config.s3)
      : { kind: 'fs', root: config.fs.root ?? join(home, 'blobs') };
  return {
    store,
    cache: {
      dir: config.cache.dir ?? join(home, 'cache'),
      budgetBytes: config.cache.budgetMiB * 2 ** 20,
    },
  };
}
