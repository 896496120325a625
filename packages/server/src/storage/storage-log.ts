/**
 * Turns the storage package's diagnostics-channel events into the daemon's
 * log lines (the library never logs itself). Chunk fetches are left out:
 * one per MiB read from a remote store is too many lines; the cache
 * counters (`NodeStorage.stats()`) carry them.
 *
 * @module
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { STORAGE_CHANNELS, type StorageChannel } from '@aenv/storage';
import type { Logger, LogLevel } from '../log.js';

const LOGGED: readonly (readonly [StorageChannel, LogLevel, string])[] = [
  [STORAGE_CHANNELS.nbdError, 'warn', 'nbd error'],
  [STORAGE_CHANNELS.seal, 'info', 'upper sealed into a layer'],
  [STORAGE_CHANNELS.upperRecovered, 'info', 'upper recovered'],
  [STORAGE_CHANNELS.nbdConnect, 'debug', 'nbd client connected'],
  [STORAGE_CHANNELS.nbdDisconnect, 'debug', 'nbd client disconnected'],
];

/**
 * Logs storage events until the returned function is called.
 * @returns the unsubscribe function.
 */
export function logStorageEvents(logger: Logger): () => void {
  const handlers = LOGGED.map(([name, level, msg]) => {
    const handler = (payload: unknown): void => {
      logger[level](msg, { ...(payload as Record<string, unknown>) });
    };
    subscribe(name, handler);
    return () => unsubscribe(name, handler);
  });
  return () => {
    for (const off of handlers) off();
  };
}
