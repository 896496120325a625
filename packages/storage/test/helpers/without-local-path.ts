// The same blob store with its `localPath` capability hidden: layer readers
// then fetch chunks with range reads and go through the chunk cache, as they
// do with a remote (S3) store. Not a fake: every call reaches the real store.
import type { BlobStore } from '../../src/blob/blob-store.js';

export function withoutLocalPath(store: BlobStore): BlobStore {
  return {
    kind: `${store.kind}-ranged`,
    put: (k, b) => store.put(k, b),
    get: (k) => store.get(k),
    getRange: (k, o, l) => store.getRange(k, o, l),
    head: (k) => store.head(k),
    delete: (k) => store.delete(k),
    list: (p) => store.list(p),
  };
}
