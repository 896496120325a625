/**
 * The diagnostics channels the storage package publishes on. The package
 * never logs: the daemon subscribes to these channels and turns the events
 * into logs and metrics. Payload keys are `LOG_FIELDS` values.
 *
 * Events published inside the NBD worker thread are forwarded to the thread
 * that owns the `NbdServer` and re-published there on the same channel, so a
 * subscriber on the main thread sees them all.
 *
 * @module
 */
import { channel } from 'node:diagnostics_channel';

/** Every channel name of this package. */
export const STORAGE_CHANNELS = Object.freeze({
  /** A layer chunk was fetched from the blob store (a cache miss). */
  fetch: 'aenv:storage:fetch',
  /** An upper was sealed into a layer. */
  seal: 'aenv:storage:seal',
  /** An upper was opened and its journal replayed. */
  upperRecovered: 'aenv:storage:upper-recovered',
  /** An NBD client connected to an export. */
  nbdConnect: 'aenv:storage:nbd-connect',
  /** An NBD client disconnected. */
  nbdDisconnect: 'aenv:storage:nbd-disconnect',
  /** An NBD request failed, or a connection broke the protocol. */
  nbdError: 'aenv:storage:nbd-error',
});

/** One of {@link STORAGE_CHANNELS}. */
export type StorageChannel = (typeof STORAGE_CHANNELS)[keyof typeof STORAGE_CHANNELS];

/** A JSON-safe event payload keyed by `LOG_FIELDS` values. */
export type StorageEvent = Readonly<Record<string, string | number | boolean | undefined>>;

/** Publishes `payload` on `name` when someone listens. */
export function publish(name: StorageChannel, payload: StorageEvent): void {
  const ch = channel(name);
  if (ch.hasSubscribers) ch.publish(payload);
}
