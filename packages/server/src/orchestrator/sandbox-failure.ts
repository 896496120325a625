/**
 * A sandbox whose VMM ended unasked becomes `failed`: the state and the
 * reason are stored first (so a crash right after still reports it), then
 * the machine's slot, disk, upper and directory are released. The record
 * stays visible, with `failureReason`, until a kill or its TTL — clients
 * learn why the sandbox is gone instead of a bare 404. The failure runs
 * first in the sandbox's operation queue (after the operation in progress).
 *
 * @module
 */
import { LOG_FIELDS } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import type { LaunchedSandbox } from './launcher.js';
import type { SandboxEntry } from './sandbox-entry.js';
import { assertTransition } from './sandbox-state.js';

/** What failing a sandbox uses of the orchestrator. */
export interface FailureDeps {
  readonly logger: () => Logger;
  /** Stores the record (durable when this returns). */
  readonly persist: (entry: SandboxEntry) => void;
  /** Arms the TTL (a failed record is removed at its end). */
  readonly armTtl: (entry: SandboxEntry) => void;
  /** Counts the exit (`machine-exit` operations, result `failed`). */
  readonly count: () => void;
}

/** Watches the machine a sandbox just started on: if it ends unasked, the sandbox fails. */
export function watchMachine(d: FailureDeps, entry: SandboxEntry): void {
  const machine = entry.machine;
  void machine?.exited.then((exit) => {
    if (entry.machine !== machine || entry.killRequested) return;
    const fields = { [LOG_FIELDS.sandboxId]: entry.id };
    d.logger().warn('sandbox machine exited', { ...fields, reason: exit.reason });
    entry.queue
      .runFirst(() => failEntry(d, entry, machine, `machine exited: ${exit.reason}`))
      .catch((err: unknown) => {
        d.logger().error('cleanup after exit failed', { ...fields, ...errorFields(err) });
      });
  });
}

/**
 * Marks a running sandbox whose `machine` ended as failed with `reason`
 * and releases the machine; nothing when the sandbox moved on meanwhile
 * (paused, killed, or running another machine).
 */
export async function failEntry(
  d: FailureDeps,
  entry: SandboxEntry,
  machine: LaunchedSandbox,
  reason: string,
): Promise<void> {
  const { record } = entry;
  if (entry.machine !== machine || record.state !== 'running' || entry.killRequested) return;
  clearTimeout(entry.ttl);
  assertTransition(record.id, record.state, 'failed');
  record.state = 'failed';
  record.failureReason = reason;
  entry.machine = undefined;
  d.persist(entry);
  d.count();
  d.armTtl(entry);
  await machine.stop();
}
