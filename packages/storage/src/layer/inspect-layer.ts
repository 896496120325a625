/**
 * What `aenv debug layer inspect <digest>` shows: a layer's header, a
 * summary of its index and its first extents, as a JSON-safe object
 * ({@link inspectLayer}) and as text ({@link formatLayerInspection}).
 * Only the header and index are fetched, never the data.
 *
 * @module
 */
import type { BlobStore } from '../blob/blob-store.js';
import { Codec, ExtentKind } from '../format/layer-index.js';
import { LayerReader } from './layer-reader.js';

/** One extent, in bytes of the disk. */
export interface InspectedExtent {
  readonly offset: number;
  readonly length: number;
  readonly kind: 'data' | 'zero';
}

/** The inspection of one layer. */
export interface LayerInspection {
  readonly digest: string;
  readonly formatVersion: number;
  readonly virtualSize: number;
  readonly blockSize: number;
  readonly chunkSize: number;
  readonly blobBytes: number;
  readonly dataExtents: number;
  readonly zeroExtents: number;
  /** Bytes of data the layer holds (uncompressed). */
  readonly dataBytes: number;
  /** Bytes the layer records as zeros. */
  readonly zeroBytes: number;
  /** Bytes the data occupies in the blob. */
  readonly storedBytes: number;
  readonly chunks: number;
  readonly compressedChunks: number;
  /** The first extents, in disk order. */
  readonly extents: readonly InspectedExtent[];
  /** Whether `extents` was cut short. */
  readonly extentsTruncated: boolean;
}

/** Options of {@link inspectLayer}. */
export interface InspectOptions {
  /** How many extents to list. @default 32 */
  readonly maxExtents?: number;
}

/** Inspects layer `digest` in `store`. */
export async function inspectLayer(
  store: BlobStore,
  digest: string,
  options: InspectOptions = {},
): Promise<LayerInspection> {
  const layer = await LayerReader.open(digest, { store });
  try {
    const { header: h, index: idx } = layer;
    const max = options.maxExtents ?? 32;
    let dataExtents = 0;
    let zeroBytes = 0;
    const extents: InspectedExtent[] = [];
    for (let i = 0; i < h.extentCount; i++) {
      const kind = idx.extentKind[i] === ExtentKind.data ? 'data' : 'zero';
      const length = (idx.extentCount[i] as number) * h.blockSize;
      if (kind === 'data') dataExtents += 1;
      else zeroBytes += length;
      if (extents.length < max) {
        extents.push({ offset: (idx.extentBlock[i] as number) * h.blockSize, length, kind });
      }
    }
    return {
      digest,
      formatVersion: h.formatVersion,
      virtualSize: h.virtualSize,
      blockSize: h.blockSize,
      chunkSize: h.chunkSize,
      blobBytes: h.indexOffset + h.indexLength,
      dataExtents,
      zeroExtents: h.extentCount - dataExtents,
      dataBytes: h.streamLength,
      zeroBytes,
      storedBytes: h.dataLength,
      chunks: h.chunkCount,
      compressedChunks: idx.chunkCodec.filter((c) => c === Codec.deflate).length,
      extents,
      extentsTruncated: h.extentCount > max,
    };
  } finally {
    await layer.close();
  }
}

/** Renders an inspection as human-readable text. */
export function formatLayerInspection(i: LayerInspection): string {
  const lines = [
    `layer        ${i.digest}`,
    `format       v${i.formatVersion}`,
    `virtual size ${bytes(i.virtualSize)}`,
    `block size   ${i.blockSize}  chunk size ${bytes(i.chunkSize)}`,
    `blob         ${bytes(i.blobBytes)}`,
    `data         ${bytes(i.dataBytes)} in ${i.dataExtents} extents, stored as ${bytes(i.storedBytes)} (${i.compressedChunks}/${i.chunks} chunks compressed)`,
    `zeros        ${bytes(i.zeroBytes)} in ${i.zeroExtents} extents`,
    'extents:',
    ...i.extents.map((e) => `  ${e.kind.padEnd(4)} ${hex(e.offset)} +${bytes(e.length)}`),
  ];
  if (i.extentsTruncated) lines.push(`  ... (${i.dataExtents + i.zeroExtents} in all)`);
  return `${lines.join('\n')}\n`;
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(10, '0')}`;
}

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]} (${n})`;
}
