/**
 * The reachability matrix of slots, defined once for any kind of guest:
 * `reachability.test.ts` runs it with stand-in guests. The same matrix with
 * real QEMU guests is `packages/testkit/test/network/reachability.vm.test.ts`
 * (the network package may not import the guest and vmm packages).
 *
 * Two slot managers run in the lab's host namespace, like two nodes sharing
 * a host: `A` with the default config, `B` with its own prefix and pool, the
 * private ranges 10.99.0.0/16 and A's pool allowed and 198.51.100.20 denied
 * by the operator. Every denial is checked against a positive control (the host
 * reaches that address, on the same port), and every expected denial must
 * be the rules' reject (a TCP reset: `refused`), not a timeout that broken
 * routing would also give.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseNetworkUpdate } from '../../src/sandbox-network.js';
import { SlotManager } from '../../src/slot-manager.js';
import type { Slot } from '../../src/slot.js';
import { GUEST_DNS } from '../../src/guest-network.js';
import type { EgressPolicy } from '../../src/egress-policy.js';
import { NetnsLab, SERVICE_PORT, WORLD, labSkipReason } from './netns-lab.js';
import type { Probe, ProbeAnswer } from './probe-client.js';
import { ENVD_PORT, type GuestFactory, type TestGuest } from './stand-in-guest.js';

/** A second port the world listens on, for port-scoped rules. */
export const OTHER_PORT = 8081;

type Expect = 'ok' | 'blocked';

interface Check {
  readonly to: string;
  readonly port?: number;
  readonly expect: Expect;
}

function policy(body: Record<string, unknown>): EgressPolicy {
  return parseNetworkUpdate(body);
}

function assertReach(answer: ProbeAnswer, expect: Expect, what: string): void {
  if (expect === 'ok') assert.equal(answer.outcome, 'ok', `${what}: ${JSON.stringify(answer)}`);
  else
    assert.equal(answer.outcome, 'refused', `${what} must be rejected: ${JSON.stringify(answer)}`);
}

/** Defines the matrix suite for one kind of guest. */
export function defineReachabilityMatrix(makeFactory: (lab: NetnsLab) => GuestFactory): void {
  let skip: string | undefined;
  let lab: NetnsLab | undefined;
  let factory: GuestFactory;
  let a: SlotManager | undefined;
  let b: SlotManager | undefined;
  let host: Probe;

  async function withGuest<T>(
    manager: SlotManager,
    egress: EgressPolicy,
    label: string,
    fn: (g: TestGuest, slot: Slot) => Promise<T>,
  ): Promise<T> {
    const slot = await manager.acquire(egress);
    let guest: TestGuest | undefined;
    try {
      guest = await factory.start(slot, label);
      return await fn(guest, slot);
    } finally {
      await guest?.close();
      await manager.release(slot);
    }
  }

  async function checkAll(g: TestGuest, checks: readonly Check[]): Promise<void> {
    for (const c of checks) {
      const port = c.port ?? SERVICE_PORT;
      assertReach(await g.probe.connect(c.to, port), c.expect, `${g.label} -> ${c.to}:${port}`);
    }
  }

  describe('reachability matrix', { timeout: 120_000 }, () => {
    before(async () => {
      skip = await labSkipReason();
      if (skip !== undefined) return;
      lab = await NetnsLab.create();
      factory = makeFactory(lab);
      const world = await lab.probe(lab.worldNetns, 'world');
      for (const ans of [
        await world.listen(SERVICE_PORT),
        await world.listen(OTHER_PORT),
        await world.listenUdp(53, WORLD.dns),
      ]) {
        assert.equal(ans.outcome, 'ok');
      }
      host = await lab.probe(lab.hostNetns, 'host');
      assert.equal((await host.listen(SERVICE_PORT)).outcome, 'ok');
      const pool0 = { slotPool: { low: 0, high: 0 } };
      a = await SlotManager.start({ config: lab.config(pool0), netns: lab.hostNetns });
      b = await SlotManager.start({
        config: lab.config({
          ...pool0,
          addressPool: '10.201.0.0/16',
          // A's pool is "allowed" here so that B's guests get as far as A's
          // ingress chain, which must stop them.
          allowPrivateRanges: ['10.99.0.0/16', '10.200.0.0/16'],
          deniedRanges: [`${WORLD.publicB}/32`],
        }),
        netns: lab.hostNetns,
      });
    });

    after(async () => {
      const errors: unknown[] = [];
      for (const m of [a, b]) await m?.close().catch((e: unknown) => errors.push(e));
      const left = (await lab?.managerLeftovers()) ?? [];
      await lab?.close();
      assert.deepEqual(errors, []);
      assert.deepEqual(left, [], 'the managers left namespaces behind');
    });

    it('positive controls: the host reaches every world address', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      for (const addr of Object.values(WORLD)) {
        if (addr === WORLD.gateway || addr === WORLD.hostUplink) continue;
        assertReach(await host.connect(addr, SERVICE_PORT), 'ok', `host -> ${addr}`);
      }
    });

    it('default policy: internet yes; private, metadata and host services no', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      await withGuest(a as SlotManager, policy({}), 'default', async (g, slot) => {
        const hello = await g.probe.connect(WORLD.publicA, SERVICE_PORT);
        assert.equal(hello.text, `hello world ${WORLD.hostUplink}`, 'egress leaves masqueraded');
        await checkAll(g, [
          { to: WORLD.publicB, expect: 'ok' },
          { to: WORLD.private10, expect: 'blocked' },
          { to: WORLD.private172, expect: 'blocked' },
          { to: WORLD.private192, expect: 'blocked' },
          { to: WORLD.cgnat, expect: 'blocked' },
          { to: WORLD.metadata, expect: 'blocked' },
          { to: WORLD.hostUplink, expect: 'blocked' },
          { to: slot.hostIp, expect: 'blocked' },
        ]);
      });
    });

    it('allow_internet_access=false with allowOut: only the allowed address', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      const p = policy({ allow_internet_access: false, allowOut: [WORLD.publicA] });
      await withGuest(a as SlotManager, p, 'allowlist', (g) =>
        checkAll(g, [
          { to: WORLD.publicA, expect: 'ok' },
          { to: WORLD.publicA2, expect: 'blocked' },
          { to: WORLD.publicB, expect: 'blocked' },
        ]),
      );
    });

    it('denyOut blocks a range; allowOut wins over denyOut', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      await withGuest(a as SlotManager, policy({ denyOut: ['203.0.113.0/24'] }), 'deny', (g) =>
        checkAll(g, [
          { to: WORLD.publicA, expect: 'blocked' },
          { to: WORLD.publicB, expect: 'ok' },
        ]),
      );
      const both = policy({ allowOut: [WORLD.publicA], denyOut: ['203.0.113.0/24'] });
      await withGuest(a as SlotManager, both, 'allow-wins', (g) =>
        checkAll(g, [
          { to: WORLD.publicA, expect: 'ok' },
          { to: WORLD.publicA2, expect: 'blocked' },
          { to: WORLD.publicB, expect: 'ok' },
        ]),
      );
    });

    it('port-scoped entries and deny-all', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      const p = policy({ allowOut: [`${WORLD.publicA}:${SERVICE_PORT}`], denyOut: ['0.0.0.0/0'] });
      await withGuest(a as SlotManager, p, 'ports', (g) =>
        checkAll(g, [
          { to: WORLD.publicA, port: SERVICE_PORT, expect: 'ok' },
          { to: WORLD.publicA, port: OTHER_PORT, expect: 'blocked' },
          { to: WORLD.publicB, expect: 'blocked' },
        ]),
      );
    });

    it('no policy opens the node-wide denied ranges', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      const p = policy({
        allowOut: [WORLD.private192, WORLD.metadata, '10.0.0.0/8', WORLD.publicB],
      });
      await withGuest(a as SlotManager, p, 'escape', (g) =>
        checkAll(g, [
          { to: WORLD.private192, expect: 'blocked' },
          { to: WORLD.private10, expect: 'blocked' },
          { to: WORLD.metadata, expect: 'blocked' },
          { to: WORLD.hostUplink, expect: 'blocked' },
        ]),
      );
      await withGuest(b as SlotManager, p, 'operator', (g) =>
        checkAll(g, [
          { to: WORLD.private10, expect: 'ok' },
          { to: WORLD.private192, expect: 'blocked' },
          { to: WORLD.publicB, expect: 'blocked' },
          { to: WORLD.publicA, expect: 'ok' },
        ]),
      );
    });

    it('DNS to the guest gateway reaches the node resolver even with internet denied', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      await withGuest(
        a as SlotManager,
        policy({ allow_internet_access: false }),
        'dns',
        async (g) => {
          const answer = await g.probe.udp(GUEST_DNS, 53, 'query');
          assert.equal(answer.outcome, 'ok', JSON.stringify(answer));
          assert.equal(answer.text, `world ${WORLD.hostUplink} query`);
          assertReach(await g.probe.connect(WORLD.publicA, SERVICE_PORT), 'blocked', 'tcp');
        },
      );
    });

    it('host reaches every guest envd; guests reach no other slot', async (t) => {
      if (skip !== undefined) return t.skip(skip);
      const ma = a as SlotManager;
      await withGuest(ma, policy({}), 'g1', (g1, s1) =>
        withGuest(ma, policy({}), 'g2', (g2, s2) =>
          withGuest(b as SlotManager, policy({}), 'g3', async (g3, s3) => {
            for (const [g, s] of [
              [g1, s1],
              [g2, s2],
              [g3, s3],
            ] as const) {
              const hello = await host.connect(s.slotIp, ENVD_PORT);
              assertReach(hello, 'ok', `host -> ${g.label} envd`);
              assert.equal(hello.text, `hello ${g.label} ${s.hostIp}`, 'DNAT to the guest');
            }
            await checkAll(g1, [
              { to: s2.slotIp, port: ENVD_PORT, expect: 'blocked' },
              { to: s3.slotIp, port: ENVD_PORT, expect: 'blocked' },
              { to: s2.hostIp, expect: 'blocked' },
            ]);
            await checkAll(g3, [{ to: s1.slotIp, port: ENVD_PORT, expect: 'blocked' }]);
          }),
        ),
      );
    });
  });
}
