/**
 * Start-up reclaim: whatever a previous run of this node (same prefix) left
 * behind, after a clean stop or a `kill -9`, is either re-adopted or removed
 * before the node hands out its first slot.
 *
 * - Leftovers are found by name only (`<prefix>-<i>` namespaces, `<prefix>-v<i>`
 *   interfaces), so other nodes and test runs on the same host are never
 *   touched, and half-built slots (a namespace without its veth) are found too.
 * - A slot the caller asks to adopt (the daemon's records of sandboxes still
 *   running) is kept when its veth and tap still exist; its addresses, routes
 *   and in-netns rules are re-applied. Otherwise it is reported lost.
 * - Everything else of the prefix is destroyed, and the host table is
 *   replaced in one transaction by one holding only the adopted slots' rules,
 *   so adopted guests' flows continue through the switch.
 *
 * @module
 */
import { LOG_FIELDS } from '@aenv/shared';
import { publish } from './events.js';
import type { HostNetwork } from './host-network.js';
import type { SlotRecord } from './slot.js';

/** What reclaim did. */
export interface ReclaimResult {
  /** Slots kept, with the policy now in force. */
  readonly adopted: readonly SlotRecord[];
  /** Slots the caller asked for that were gone or broken (and are now removed). */
  readonly lost: readonly number[];
  /** Leftover slot indices removed. */
  readonly removed: readonly number[];
}

/**
 * Reclaims a node's leftovers.
 * @param capacity indices at or above it cannot be adopted.
 * @throws {AenvError} `NET_COMMAND_FAILED` when leftovers cannot be removed.
 */
export async function reclaim(
  host: HostNetwork,
  adopt: readonly SlotRecord[],
  capacity: number,
): Promise<ReclaimResult> {
  const leftovers = await host.discover();
  const present = new Set(leftovers);
  const adopted: SlotRecord[] = [];
  const lost: number[] = [];
  const wanted = new Map(adopt.map((r) => [r.index, r]));
  for (const record of wanted.values()) {
    const usable =
      Number.isSafeInteger(record.index) &&
      record.index >= 0 &&
      record.index < capacity &&
      present.has(record.index) &&
      (await host.ensure(record.index));
    if (usable) adopted.push(record);
    else lost.push(record.index);
  }
  const keep = new Set(adopted.map((r) => r.index));
  const removed = leftovers.filter((i) => !keep.has(i));
  await host.destroy(removed);
  await host.installTable(adopted);
  for (const r of adopted) {
    publish('slotAdopt', { [LOG_FIELDS.slotId]: r.index, [LOG_FIELDS.stage]: 'adopted' });
  }
  for (const i of lost)
    publish('slotAdopt', { [LOG_FIELDS.slotId]: i, [LOG_FIELDS.stage]: 'lost' });
  if (removed.length > 0) {
    publish('slotDestroy', { [LOG_FIELDS.slotId]: removed, [LOG_FIELDS.stage]: 'reclaim' });
  }
  return { adopted, lost, removed };
}
