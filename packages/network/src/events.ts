/**
 * The diagnostics channels the network package publishes on. This package
 * never logs; the daemon subscribes and turns events into logs and metrics.
 * Every message uses the field names of `@aenv/shared`'s `LOG_FIELDS`
 * (`slot.id`, `op`, `stage`, `duration_ms`, `error.code`, `error.message`,
 * `sandbox.id`).
 *
 * Channels:
 * - `aenv:network:slot-build`: slots were built (`slot.id` is an array,
 *   `stage` is `pool` for a refill batch or `cold` for an acquire);
 * - `aenv:network:slot-acquire`: a slot was handed out (`stage`: `pool` or
 *   `cold`; `duration_ms` is the acquire latency);
 * - `aenv:network:slot-release`: a slot came back (`stage`: `pooled` or
 *   `destroyed`);
 * - `aenv:network:slot-destroy`: slots were removed (`stage`: `release`,
 *   `failed-acquire`, `reclaim`, `close`);
 * - `aenv:network:slot-adopt`: a slot of a previous run was re-adopted
 *   (`stage`: `adopted` or `lost`);
 * - `aenv:network:policy-apply`: a slot's egress policy was replaced;
 * - `aenv:network:error`: a background operation failed (`op`:
 *   `pool-refill`, `scrub`, `destroy`).
 *
 * @module
 */
import { channel } from 'node:diagnostics_channel';
import { AenvError, LOG_FIELDS, toAenvError } from '@aenv/shared';

/** The channel names, by event. */
export const NETWORK_CHANNELS = Object.freeze({
  slotBuild: 'aenv:network:slot-build',
  slotAcquire: 'aenv:network:slot-acquire',
  slotRelease: 'aenv:network:slot-release',
  slotDestroy: 'aenv:network:slot-destroy',
  slotAdopt: 'aenv:network:slot-adopt',
  policyApply: 'aenv:network:policy-apply',
  error: 'aenv:network:error',
});

/** One of the {@link NETWORK_CHANNELS} keys. */
export type NetworkEvent = keyof typeof NETWORK_CHANNELS;

/** A published message: `LOG_FIELDS` keys to JSON-safe values. */
export type EventMessage = Readonly<
  Record<string, string | number | boolean | number[] | undefined>
>;

/** Publishes one event; free when nobody subscribes. */
export function publish(event: NetworkEvent, message: EventMessage): void {
  const ch = channel(NETWORK_CHANNELS[event]);
  if (ch.hasSubscribers) ch.publish(message);
}

/** Publishes a failed background operation on `aenv:network:error`. */
export function publishError(op: string, err: unknown, slotIds?: number[]): void {
  const e = err instanceof AenvError ? err : toAenvError(err);
  publish('error', {
    [LOG_FIELDS.op]: op,
    [LOG_FIELDS.slotId]: slotIds,
    [LOG_FIELDS.errorCode]: e.code,
    [LOG_FIELDS.errorMessage]: e.message,
  });
}
