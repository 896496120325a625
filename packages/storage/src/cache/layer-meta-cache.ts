/**
 * `LayerMetaCache`: the verified header and index bytes of layers opened
 * from a remote blob store, kept in memory beside a {@link ChunkCache}.
 *
 * Opening a layer reads its header and index before any chunk; without
 * this cache every open goes to the store, so a store outage would fail
 * every create even when all the chunks it needs are cached locally.
 * Entries are content-addressed (the layer digest is the sha256 of exactly
 * these bytes, checked before they are kept), so they never go stale.
 * The cache is bounded in bytes and evicts the least recently used entry.
 *
 * @module
 */

/** The bytes a layer is opened from. */
export interface LayerMeta {
  readonly header: Buffer;
  readonly index: Buffer;
}

/** Default byte budget: enough for thousands of typical layer indexes. */
export const DEFAULT_LAYER_META_BUDGET = 32 << 20;

/** A bounded, in-memory LRU of layer headers and indexes. */
export class LayerMetaCache {
  readonly #budget: number;
  readonly #entries = new Map<string, LayerMeta>();
  #used = 0;

  constructor(budgetBytes = DEFAULT_LAYER_META_BUDGET) {
    this.#budget = budgetBytes;
  }

  /** Bytes held now. */
  get usedBytes(): number {
    return this.#used;
  }

  /** The kept bytes of layer `digest`, refreshing its recency. */
  get(digest: string): LayerMeta | undefined {
    const meta = this.#entries.get(digest);
    if (meta === undefined) return undefined;
    this.#entries.delete(digest);
    this.#entries.set(digest, meta);
    return meta;
  }

  /** Keeps the bytes of layer `digest`; the caller has verified them against the digest. */
  set(digest: string, meta: LayerMeta): void {
    const size = meta.header.length + meta.index.length;
    if (size > this.#budget) return;
    this.#drop(digest);
    while (this.#used + size > this.#budget) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#drop(oldest.value);
    }
    this.#entries.set(digest, meta);
    this.#used += size;
  }

  #drop(digest: string): void {
    const meta = this.#entries.get(digest);
    if (meta === undefined) return;
    this.#entries.delete(digest);
    this.#used -= meta.header.length + meta.index.length;
  }
}
