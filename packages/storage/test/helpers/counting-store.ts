// A blob store decorator that counts range reads, to check what lazy
// loading fetches. Every call goes to the real store underneath.
import type { BlobStore } from '../../src/blob/blob-store.js';

export interface CountingStore extends BlobStore {
  readonly ranges: { key: string; offset: number; length: number }[];
  close(): Promise<void>;
}

export function countingStore(store: BlobStore): CountingStore {
  const ranges: { key: string; offset: number; length: number }[] = [];
  return {
    kind: `${store.kind}-counted`,
    ranges,
    put: (k, b) => store.put(k, b),
    get: (k) => store.get(k),
    getRange: (key, offset, length) => {
      ranges.push({ key, offset, length });
      return store.getRange(key, offset, length);
    },
    head: (k) => store.head(k),
    delete: (k) => store.delete(k),
    list: (p) => store.list(p),
    close: () => store.close?.() ?? Promise.resolve(),
  };
}
