/**
 * A slot manager in a process of its own, for crash tests: the test kills it
 * with SIGKILL and checks what a restarted manager makes of its leftovers.
 *
 * Usage: `node manager-child.js '<json spec>'`. It starts a manager, waits
 * until the pool is full, acquires one slot per policy in `acquire`, prints
 * one JSON line `{slots, records}` and then idles until killed. With
 * `printEarly`, it prints `{started: true}` right after start instead, while
 * the pool is still being built.
 *
 * @module
 */
import type { EgressPolicy } from '../../src/egress-policy.js';
import type { NetworkConfig } from '../../src/network-config.js';
import { SlotManager } from '../../src/slot-manager.js';

interface Spec {
  readonly config: NetworkConfig;
  readonly netns: string;
  readonly acquire: EgressPolicy[];
  readonly printEarly?: boolean;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
const manager = await SlotManager.start({ config: spec.config, netns: spec.netns });
if (spec.printEarly === true) {
  process.stdout.write(JSON.stringify({ started: true }) + '\n');
} else {
  while (manager.stats().ready < spec.config.slotPool.high)
    await new Promise((r) => setTimeout(r, 10));
  const slots = [];
  for (const p of spec.acquire) slots.push(await manager.acquire(p));
  process.stdout.write(JSON.stringify({ slots, records: slots.map((s) => s.save()) }) + '\n');
}
setInterval(() => undefined, 1 << 30);
