/**
 * A guest cannot send with a source address other than its own (issue #14,
 * guest → guest / guest → world): a STAND-IN guest (`support/stand-in-
 * guest.ts`, a namespace in the tap's place; the slot namespace and the host
 * table are the real ones) with the default policy reaches a world service,
 * then routes the same destination with a forged source: another
 * link-local address, an outside address, another slot's host-side address
 * and the slot's own host-side address. Every forged connection must fail
 * (the slot namespace forwards only the guest's own address, the host table
 * checks the reverse path), and the genuine one must work again after each,
 * so a failure is the forged source, not a broken lab.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../src/command-runner.js';
import { GUEST_GATEWAY } from '../src/guest-network.js';
import { parseNetworkUpdate } from '../src/sandbox-network.js';
import { SlotManager } from '../src/slot-manager.js';
import type { Slot } from '../src/slot.js';
import { NetnsLab, SERVICE_PORT, WORLD, labSkipReason } from './support/netns-lab.js';
import { StandInGuests, type TestGuest } from './support/stand-in-guest.js';

describe('source address spoofing from a slot', { timeout: 120_000 }, () => {
  let skip: string | undefined;
  let lab: NetnsLab | undefined;
  let manager: SlotManager | undefined;
  let guest: TestGuest | undefined;
  let guestNetns = '';
  const slots: Slot[] = [];

  before(async () => {
    skip = await labSkipReason();
    if (skip !== undefined) return;
    lab = await NetnsLab.create();
    const world = await lab.probe(lab.worldNetns, 'world');
    assert.equal((await world.listen(SERVICE_PORT)).outcome, 'ok');
    manager = await SlotManager.start({
      config: lab.config({ slotPool: { low: 0, high: 0 } }),
      netns: lab.hostNetns,
    });
    const open = parseNetworkUpdate({});
    slots.push(await manager.acquire(open), await manager.acquire(open));
    // The factory names its first guest's namespace `<lab id>-g0`.
    guestNetns = `${lab.id}-g0`;
    guest = await new StandInGuests(lab).start(slots[0] as Slot, 'spoofer');
  });

  after(async () => {
    await guest?.close().catch(() => undefined);
    for (const s of slots) await manager?.release(s).catch(() => undefined);
    await manager?.close();
    const left = (await lab?.managerLeftovers()) ?? [];
    await lab?.close();
    assert.deepEqual(left, []);
  });

  it('drops every forged source; the genuine one keeps working', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const g = guest as TestGuest;
    const [own, other] = slots as [Slot, Slot];
    const hostSide = (s: Slot): string => s.slotIp.replace(/\d+$/, (d) => String(Number(d) - 1));
    const forged = ['169.254.100.6', '198.51.100.99', other.slotIp, hostSide(own), own.slotIp];
    const route = (...args: string[]): Promise<unknown> =>
      run(['ip', '-n', guestNetns, 'route', ...args]);
    const genuine = async (): Promise<void> => {
      const a = await g.probe.connect(WORLD.publicA, SERVICE_PORT);
      assert.equal(a.outcome, 'ok', `genuine source reaches the world: ${JSON.stringify(a)}`);
    };
    // Counts SYNs to the service arriving in the world (whatever NAT made of their source).
    const w = (lab as NetnsLab).worldNetns;
    const inWorld = ['ip', 'netns', 'exec', w, 'nft'];
    await run([...inWorld, '-f', '-'], {
      input: [
        `table inet spoof_count {`,
        `  counter syns {}`,
        `  chain input { type filter hook input priority -300; tcp dport ${SERVICE_PORT} tcp flags syn / syn,ack counter name syns; }`,
        `}`,
      ].join('\n'),
    });
    const syns = async (): Promise<number> => {
      const out = await run([...inWorld, 'list', 'counter', 'inet', 'spoof_count', 'syns']);
      return Number(/packets (\d+)/.exec(out.stdout)?.[1] ?? NaN);
    };
    await genuine();
    assert.ok((await syns()) >= 1, 'the world counts the genuine SYN');
    for (const src of forged) {
      const before = await syns();
      await run(['ip', '-n', guestNetns, 'addr', 'add', `${src}/32`, 'dev', 'eth0']);
      await route('replace', `${WORLD.publicA}/32`, 'via', GUEST_GATEWAY, 'src', src);
      try {
        const a = await g.probe.connect(WORLD.publicA, SERVICE_PORT, 1500);
        assert.notEqual(a.outcome, 'ok', `forged source ${src} got through: ${JSON.stringify(a)}`);
        assert.equal(await syns(), before, `a SYN from forged ${src} reached the world`);
        t.diagnostic(`forged ${src}: ${a.outcome}`);
      } finally {
        await route('del', `${WORLD.publicA}/32`);
        await run(['ip', '-n', guestNetns, 'addr', 'del', `${src}/32`, 'dev', 'eth0']);
      }
      await genuine();
    }
  });
});
