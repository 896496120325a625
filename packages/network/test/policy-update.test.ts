/**
 * Replacing the policy of a running sandbox (`PUT /sandboxes/{id}/network`):
 * it takes effect at once, keeps established flows the new policy allows,
 * cuts those it denies, and does not disturb other slots' traffic. Guests
 * are STAND-INs (see `support/stand-in-guest.ts`).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { parseNetworkUpdate } from '../src/sandbox-network.js';
import { SlotManager } from '../src/slot-manager.js';
import type { Slot } from '../src/slot.js';
import { NetnsLab, SERVICE_PORT, WORLD, labSkipReason } from './support/netns-lab.js';
import { StandInGuests, type TestGuest } from './support/stand-in-guest.js';

describe('policy update on a running slot', { timeout: 120_000 }, () => {
  let skip: string | undefined;
  let lab: NetnsLab | undefined;
  let manager: SlotManager | undefined;
  const guests: TestGuest[] = [];
  const slots: Slot[] = [];

  before(async () => {
    skip = await labSkipReason();
    if (skip !== undefined) return;
    lab = await NetnsLab.create();
    const world = await lab.probe(lab.worldNetns, 'world');
    assert.equal((await world.listen(SERVICE_PORT)).outcome, 'ok');
    manager = await SlotManager.start({
      config: lab.config({ slotPool: { low: 1, high: 2 } }),
      netns: lab.hostNetns,
    });
    const factory = new StandInGuests(lab);
    for (const label of ['subject', 'bystander']) {
      const slot = await manager.acquire();
      slots.push(slot);
      guests.push(await factory.start(slot, label));
    }
  });

  after(async () => {
    for (const g of guests) await g.close().catch(() => undefined);
    await manager?.close();
    const left = (await lab?.managerLeftovers()) ?? [];
    await lab?.close();
    assert.deepEqual(left, []);
  });

  it('keeps allowed established flows, cuts denied ones, leaves other slots alone', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const m = manager as SlotManager;
    const [subject, bystander] = guests as [TestGuest, TestGuest];
    assert.equal((await subject.probe.open('keep', WORLD.publicA, SERVICE_PORT)).outcome, 'ok');
    assert.equal((await subject.probe.open('cut', WORLD.publicB, SERVICE_PORT)).outcome, 'ok');
    assert.equal((await bystander.probe.open('other', WORLD.publicA, SERVICE_PORT)).outcome, 'ok');

    // The bystander talks without pause while the subject's policy changes.
    let stop = false;
    let echoes = 0;
    const failures: string[] = [];
    const chatter = (async () => {
      while (!stop) {
        const a = await bystander.probe.echo('other', `n${echoes}`);
        if (a.outcome === 'ok' && a.text === `n${echoes}`) echoes++;
        else failures.push(JSON.stringify(a));
      }
    })();

    const narrow = parseNetworkUpdate({ allowOut: [WORLD.publicA], denyOut: ['0.0.0.0/0'] });
    const t0 = performance.now();
    await m.applyPolicy(slots[0] as Slot, narrow);
    t.diagnostic(`applyPolicy on a running slot: ${(performance.now() - t0).toFixed(1)} ms`);
    assert.deepEqual(slots[0]?.policy, narrow);

    const kept = await subject.probe.echo('keep', 'still here');
    assert.equal(kept.text, 'still here', `allowed flow survives: ${JSON.stringify(kept)}`);
    const cut = await subject.probe.echo('cut', 'gone');
    assert.notEqual(cut.outcome, 'ok', 'a flow the new policy denies stops');
    assert.equal((await subject.probe.connect(WORLD.publicB, SERVICE_PORT)).outcome, 'refused');
    assert.equal((await subject.probe.connect(WORLD.publicA, SERVICE_PORT)).outcome, 'ok');

    // Many replacements in a row: the allowed flow never notices.
    const wide = parseNetworkUpdate({ allowOut: [WORLD.publicA, '198.51.100.0/24:8080'] });
    for (let i = 0; i < 20; i++) {
      await m.applyPolicy(slots[0], i % 2 === 0 ? wide : narrow);
      const e = await subject.probe.echo('keep', `round ${i}`);
      assert.equal(e.text, `round ${i}`, `round ${i}: ${JSON.stringify(e)}`);
    }
    stop = true;
    await chatter;
    assert.deepEqual(failures, [], 'the other slot was disturbed');
    assert.ok(echoes > 5, `the other slot kept talking (${echoes} echoes)`);
  });

  it('refuses to change a released slot, even after its resources are leased again', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const m = manager as SlotManager;
    const stale = await m.acquire(parseNetworkUpdate({ denyOut: ['0.0.0.0/0'] }));
    await m.release(stale);
    await m.release(stale);
    const fresh = await m.acquire();
    try {
      await assert.rejects(m.applyPolicy(stale, parseNetworkUpdate({})), (err: unknown) => {
        return err instanceof AenvError && err.code === 'NET_SLOT_RELEASED';
      });
      assert.deepEqual(fresh.policy.denyOut, []);
      assert.deepEqual(
        stale.policy.denyOut,
        [{ cidr: '0.0.0.0/0' }],
        'a stale lease shows its own last policy',
      );
    } finally {
      await m.release(fresh);
    }
  });
});
