/**
 * Diagnostics channels of the vmm package. Library packages never log
 * (style R8): each lifecycle operation publishes one event when it ends,
 * on `aenv:vmm:<op>`, with the field names of `@aenv/shared` LOG_FIELDS
 * (`sandbox.id`, `vmm.driver`, `vm.pid`, `op`, `duration_ms`, and
 * `error.code`/`error.message` when it failed). `aenv:vmm:exit` reports a
 * VMM process ending, with `reason` (see {@link ExitReason}). `prepare` is
 * the first part of a prepared restore (`prepareRestore`); its `restore`
 * event carries `prepared: true` and times `complete()` alone.
 *
 * @module
 */
import { channel } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import type { ExitReason } from './driver.js';

/** Channel names, by operation. */
export const VMM_CHANNELS = {
  boot: 'aenv:vmm:boot',
  restore: 'aenv:vmm:restore',
  prepare: 'aenv:vmm:prepare',
  pause: 'aenv:vmm:pause',
  resume: 'aenv:vmm:resume',
  snapshot: 'aenv:vmm:snapshot',
  stop: 'aenv:vmm:stop',
  exit: 'aenv:vmm:exit',
} as const;

/** An operation that has a channel. */
export type VmmOp = keyof typeof VMM_CHANNELS;

/** The payload of every vmm event. */
export type VmmEvent = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** Identity fields every event of one VM carries. */
export interface VmEventSource {
  readonly id: string;
  readonly driver: string;
  readonly pid: number | undefined;
}

/** Publishes the end of `op` (success when `err` is undefined). */
export function publishOp(
  op: VmmOp,
  vm: VmEventSource,
  startedAt: number,
  err?: unknown,
  extra: VmmEvent = {},
): void {
  const ch = channel(VMM_CHANNELS[op]);
  if (!ch.hasSubscribers) return;
  const event: Record<string, unknown> = {
    [LOG_FIELDS.sandboxId]: vm.id,
    [LOG_FIELDS.vmmDriver]: vm.driver,
    [LOG_FIELDS.vmPid]: vm.pid,
    [LOG_FIELDS.op]: op,
    [LOG_FIELDS.durationMs]: Math.round((performance.now() - startedAt) * 1000) / 1000,
    ...extra,
  };
  if (err !== undefined) {
    event[LOG_FIELDS.errorCode] = err instanceof AenvError ? err.code : 'INTERNAL';
    event[LOG_FIELDS.errorMessage] = err instanceof Error ? err.message : inspect(err);
  }
  ch.publish(event);
}

/** Publishes a VMM process's end. */
export function publishExit(vm: VmEventSource, reason: ExitReason, extra: VmmEvent = {}): void {
  const ch = channel(VMM_CHANNELS.exit);
  if (!ch.hasSubscribers) return;
  ch.publish({
    [LOG_FIELDS.sandboxId]: vm.id,
    [LOG_FIELDS.vmmDriver]: vm.driver,
    [LOG_FIELDS.vmPid]: vm.pid,
    reason,
    ...extra,
  });
}

/** Where the driver says, once at startup, whether it jails VMMs and why. */
export const VMM_JAIL_CHANNEL = 'aenv:vmm:jail';

/** Publishes the jail decision (`enabled`, a one-line `reason`). */
export function publishJail(driver: string, enabled: boolean, reason: string): void {
  const ch = channel(VMM_JAIL_CHANNEL);
  if (!ch.hasSubscribers) return;
  ch.publish({ [LOG_FIELDS.vmmDriver]: driver, enabled, reason });
}
