/**
 * `@aenv/storage/testing`: conformance suites (`node:test`) and the flat
 * in-memory device. Importing it pulls in `node:test`; the main entry
 * point does not.
 *
 * @module
 */
export { runBlobStoreSuite, type BlobStoreSuiteOptions } from './blob-store-suite.js';
export { runBlockDeviceSuite, type BlockDeviceSuiteOptions } from './block-device-suite.js';
export { MemoryDevice } from './memory-device.js';
export type { SuiteSkip } from './suite-skip.js';
export { startOutageProxy, startSilentServer, type OutageProxy } from './outage-proxy.js';
export { mountSmallFs, smallFsSkip, type SmallFs } from './small-fs.js';
