/**
 * What an NBD connection needs from the disk it serves (`NbdProvider`),
 * and the per-export counters the server keeps.
 *
 * The server depends only on this provider, not on image stacks: any
 * `WritableDevice` fits, and so does a read-only device.
 *
 * @module
 */
import type { WriteOptions } from '../device.js';

/** The block operations an NBD export serves. */
export interface NbdProvider {
  readonly size: number;
  readonly blockSize: number;
  readonly readOnly: boolean;
  readAt(target: Uint8Array, offset: number): Promise<void>;
  writeAt(data: Uint8Array, offset: number, options?: WriteOptions): Promise<void>;
  writeZeroesAt(offset: number, length: number, options?: WriteOptions): Promise<void>;
  trimAt(offset: number, length: number, options?: WriteOptions): Promise<void>;
  flush(): Promise<void>;
  /** Optional: `NBD_CMD_CACHE` (fetch ahead of use). */
  prefetch?(ranges: readonly { offset: number; length: number }[]): Promise<void>;
}

/** Counters of one export. */
export interface NbdExportCounters {
  connections: number;
  connectionsTotal: number;
  reads: number;
  writes: number;
  bytesRead: number;
  bytesWritten: number;
  flushes: number;
  trims: number;
  zeroes: number;
  caches: number;
  errors: number;
}

/** An export as the connections see it. */
export interface NbdExport {
  readonly name: string;
  readonly provider: NbdProvider;
  readonly counters: NbdExportCounters;
}

/** Fresh zeroed counters. */
export function newCounters(): NbdExportCounters {
  return {
    connections: 0,
    connectionsTotal: 0,
    reads: 0,
    writes: 0,
    bytesRead: 0,
    bytesWritten: 0,
    flushes: 0,
    trims: 0,
    zeroes: 0,
    caches: 0,
    errors: 0,
  };
}
