/**
 * Blob stores from plain, JSON-safe descriptions. The NBD worker thread
 * builds its own store objects from these (class instances cannot cross
 * threads), and a daemon's config section maps onto them directly.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { BlobStore } from './blob-store.js';
import { FsBlobStore } from './fs-blob-store.js';
import { S3BlobStore, type S3BlobStoreOptions } from './s3-blob-store.js';

/** A blob store, described as data. */
export type BlobStoreSpec =
  | { readonly kind: 'fs'; readonly root: string }
  | ({ readonly kind: 's3' } & Omit<S3BlobStoreOptions, 'clientConfig'>);

/**
 * Builds the store a spec describes.
 * @throws {AenvError} `INVALID_ARGUMENT` for an unknown kind.
 */
export function createBlobStore(spec: BlobStoreSpec): BlobStore {
  switch (spec.kind) {
    case 'fs':
      return new FsBlobStore(spec.root);
    case 's3': {
      const { kind: _kind, ...options } = spec;
      return new S3BlobStore(options);
    }
    default:
      throw new AenvError('INVALID_ARGUMENT', `unknown blob store kind ${JSON.stringify(spec)}`);
  }
}
