/**
 * `@aenv/storage`: layered block images. Immutable content-addressed
 * layers in a blob store (local directory or S3), one writable upper per
 * sandbox, sealing, lazy chunk fetching through a bounded cache, and an NBD
 * server that serves a stack to QEMU from a worker thread.
 *
 * `@aenv/storage/testing` holds the conformance suites and the in-memory
 * device.
 *
 * @module
 */
export type { ReadableDevice, WritableDevice, WriteOptions } from './device.js';
export { digestHex, isDigest, layerKey, sha256Digest } from './digest.js';
export { STORAGE_CHANNELS, type StorageChannel, type StorageEvent } from './events.js';
export { useSyncIo } from './file-io.js';
export type { BlobBody, BlobInfo, BlobStore } from './blob/blob-store.js';
export { assertBlobKey } from './blob/blob-store.js';
export { FsBlobStore } from './blob/fs-blob-store.js';
export {
  S3BlobStore,
  S3_FAIL_FAST_DEFAULTS,
  type S3BlobStoreOptions,
} from './blob/s3-blob-store.js';
export { createBlobStore, type BlobStoreSpec } from './blob/create-blob-store.js';
export {
  ChunkCache,
  DEFAULT_SLOT_SIZE,
  type CacheStats,
  type ChunkCacheOptions,
} from './cache/chunk-cache.js';
export {
  LayerMetaCache,
  DEFAULT_LAYER_META_BUDGET,
  type LayerMeta,
} from './cache/layer-meta-cache.js';
export {
  LAYER_FORMAT_VERSION,
  LAYER_HEADER_SIZE,
  LAYER_MAGIC,
  type LayerHeader,
} from './format/layer-header.js';
export { LayerReader, type LayerSource } from './layer/layer-reader.js';
export {
  DEFAULT_CHUNK_SIZE,
  LayerWriter,
  type BuiltLayer,
  type LayerCompression,
  type LayerWriterOptions,
} from './layer/layer-writer.js';
export {
  formatLayerInspection,
  inspectLayer,
  type InspectOptions,
  type InspectedExtent,
  type LayerInspection,
} from './layer/inspect-layer.js';
export { Upper, deleteUpper, type UpperMode } from './upper/upper.js';
export {
  DEFAULT_BLOCK_SIZE,
  normalizeImageSpec,
  stackHash,
  type ImageSpec,
} from './image/image-spec.js';
export {
  ImageDevice,
  type ByteRange,
  type ImageDeviceStats,
  type OpenImageOptions,
  type SealOptions,
  type SealResult,
} from './image/image-device.js';
export type { Segment, StackLevel } from './image/stack-level.js';
export { importRawImage, type ImportRawOptions, type ImportResult } from './transfer/import-raw.js';
export { exportRawImage, type ExportResult } from './transfer/export-raw.js';
export { NbdServer, type NbdServerOptions } from './nbd/nbd-server.js';
export {
  NbdHost,
  type ExportSpec,
  type ExportStats,
  type NbdHostOptions,
  type NbdHostStats,
} from './nbd/nbd-host.js';
export type { NbdExportCounters, NbdProvider } from './nbd/nbd-export.js';
export { nbdUnixUri, qemuNbdDriveOptions } from './nbd/protocol.js';
export {
  S3_ADDRESSING_CHOICES,
  resolveStorageSettings,
  storageConfigSchema,
  type StorageConfig,
  type StorageSettings,
} from './storage-config.js';
