/**
 * A view of a blob store under a key prefix. The cluster's shared objects
 * (exported snapshots, memory files as layers) live under `cluster/` of
 * the store they share with disk layers, so a node's layer collection
 * (`layers/sha256/`) never sees them.
 *
 * @module
 */
import type { BlobBody, BlobInfo, BlobStore } from '@aenv/storage';
import type { Readable } from 'node:stream';

/** `store` with every key under `prefix` (e.g. `cluster/`). */
export class PrefixedBlobStore implements BlobStore {
  readonly kind: string;
  readonly #store: BlobStore;
  readonly #prefix: string;

  constructor(store: BlobStore, prefix: string) {
    this.#store = store;
    this.#prefix = prefix;
    this.kind = store.kind;
  }

  put(key: string, body: BlobBody): Promise<BlobInfo> {
    return this.#store.put(this.#prefix + key, body).then((i) => ({ ...i, key }));
  }

  get(key: string): Promise<Readable> {
    return this.#store.get(this.#prefix + key);
  }

  getRange(key: string, offset: number, length: number): Promise<Buffer> {
    return this.#store.getRange(this.#prefix + key, offset, length);
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    const info = await this.#store.head(this.#prefix + key);
    return info === undefined ? undefined : { ...info, key };
  }

  delete(key: string): Promise<void> {
    return this.#store.delete(this.#prefix + key);
  }

  async *list(prefix = ''): AsyncIterable<BlobInfo> {
    for await (const b of this.#store.list(this.#prefix + prefix)) {
      yield { ...b, key: b.key.slice(this.#prefix.length) };
    }
  }

  localPath(key: string): string | undefined {
    return this.#store.localPath?.(this.#prefix + key);
  }

  async close(): Promise<void> {
    await this.#store.close?.();
  }
}
