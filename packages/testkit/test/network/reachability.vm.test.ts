/**
 * The network reachability matrix with REAL guests (issue #6): two QEMU
 * microVMs (the `@aenv/vmm` driver; TCG here) booted from the real guest
 * artifacts in slots of a `SlotManager` that runs inside the topology's
 * "host" namespace, with "world" playing the internet and the private
 * ranges (`netns-topology.ts`). Every probe from a guest leaves the guest's
 * own kernel: a probe agent runs inside each VM, driven through envd's
 * process API (`qemu-guest.ts`); the test reaches envd from "host" at
 * `slotIp:49983`, as the node's proxy does. (Moved here from the server's
 * tests with its fixtures, so the testkit holds one copy of them.)
 *
 * Covered: host → guest envd; guest → world allowed/denied per policy (at
 * acquire and replaced on the running guest, allowOut beating denyOut,
 * port-scoped entries, the node-wide denied ranges no policy opens, DNS);
 * guest → host services; guest → the other slot; a policy update that
 * leaves an established allowed flow untouched while it cuts a denied one.
 * Every denial must be the rules' TCP reset (`refused`), never a timeout
 * that broken routing would also give, and has a positive control.
 * At the end nothing may be left: no QEMU, namespace, link or nft table.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ENVD_PORT, prepareGuestArtifacts, type GuestArtifacts } from '@aenv/guest';
import {
  GUEST_DNS,
  GUEST_IP,
  SlotManager,
  parseNetworkUpdate,
  type EgressPolicy,
  type Slot,
} from '@aenv/network';
import { loadConfig } from '@aenv/shared';
import { createVmmDriver, vmmConfigSchema, type VmmDriver } from '@aenv/vmm';
import {
  NetnsTopology,
  OTHER_PORT,
  QemuGuest,
  SERVICE_PORT,
  TEST_CACHE,
  WORLD,
  sh,
  topologySkipReason,
  type Probe,
  type ProbeAnswer,
} from '../../src/index.js';

const exec = promisify(execFile);
type Expect = 'ok' | 'blocked';

interface Check {
  readonly to: string;
  readonly port?: number;
  readonly expect: Expect;
  readonly what?: string;
}

/** One verified cell of the matrix, printed as a table at the end. */
interface Cell {
  readonly from: string;
  readonly policy: string;
  readonly to: string;
  readonly outcome: string;
}

const policy = (body: Record<string, unknown>): EgressPolicy => parseNetworkUpdate(body);

function assertReach(answer: ProbeAnswer, expect: Expect, what: string): void {
  if (expect === 'ok') assert.equal(answer.outcome, 'ok', `${what}: ${JSON.stringify(answer)}`);
  else
    assert.equal(answer.outcome, 'refused', `${what} must be rejected: ${JSON.stringify(answer)}`);
}

async function skipReason(): Promise<string | undefined> {
  const net = await topologySkipReason();
  if (net !== undefined) return net;
  for (const tool of ['qemu-system-x86_64', 'qemu-img']) {
    try {
      await exec(tool, ['--version']);
    } catch {
      return `needs ${tool} (scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}

describe('reachability matrix with real QEMU guests', { timeout: 600_000 }, () => {
  const suiteStart = performance.now();
  let skip: string | undefined;
  let topo: NetnsTopology | undefined;
  let manager: SlotManager | undefined;
  let driver: VmmDriver;
  let artifacts: GuestArtifacts & { baseImage: string };
  let host: Probe;
  const slots: Slot[] = [];
  const guests: QemuGuest[] = [];
  const cells: Cell[] = [];
  const policyLabel = new Map<QemuGuest, string>();

  const g = (i: 0 | 1): QemuGuest => guests[i] as QemuGuest;

  async function checkAll(guest: QemuGuest, checks: readonly Check[]): Promise<void> {
    for (const c of checks) {
      const port = c.port ?? SERVICE_PORT;
      const answer = await guest.probe.connect(c.to, port);
      const to = `${c.what ?? c.to}:${port}`;
      cells.push({
        from: guest.label,
        policy: policyLabel.get(guest) ?? '?',
        to,
        outcome: answer.outcome,
      });
      assertReach(answer, c.expect, `${guest.label} -> ${to}`);
    }
  }

  async function setPolicy(guest: QemuGuest, label: string, p: EgressPolicy): Promise<number> {
    const t0 = performance.now();
    await (manager as SlotManager).applyPolicy(guest.slot, p);
    policyLabel.set(guest, label);
    return performance.now() - t0;
  }

  before(async () => {
    skip = await skipReason();
    if (skip !== undefined) return;
    const tArtifacts = performance.now();
    const prepared = await prepareGuestArtifacts({ cacheDir: TEST_CACHE });
    console.log(`guest artifacts (cache check): ${Math.round(performance.now() - tArtifacts)} ms`);
    if (prepared.baseImage === undefined) {
      skip = 'the guest artifacts have no base image';
      return;
    }
    artifacts = { ...prepared, baseImage: prepared.baseImage };
    driver = (await createVmmDriver(loadConfig(vmmConfigSchema, { env: {} }))).driver;
    topo = await NetnsTopology.create();
    const world = await topo.probe(topo.worldNetns, 'world');
    for (const ans of [
      await world.listen(SERVICE_PORT),
      await world.listen(OTHER_PORT),
      await world.listenUdp(53, WORLD.dns),
    ]) {
      assert.equal(ans.outcome, 'ok');
    }
    host = await topo.probe(topo.hostNetns, 'host');
    assert.equal((await host.listen(SERVICE_PORT)).outcome, 'ok');
    manager = await SlotManager.start({
      config: topo.config({ slotPool: { low: 0, high: 0 } }),
      netns: topo.hostNetns,
    });
    const first = policy({ allowOut: [WORLD.publicA], denyOut: ['203.0.113.0/24'] });
    slots.push(await manager.acquire(first), await manager.acquire(policy({})));
    const t0 = performance.now();
    const booted = await Promise.allSettled(
      slots.map((slot, i) =>
        QemuGuest.boot({
          driver,
          artifacts,
          slot,
          label: `g${i + 1}`,
          dir: (topo as NetnsTopology).workDir,
          hostProbe: host,
        }),
      ),
    );
    for (const b of booted) if (b.status === 'fulfilled') guests.push(b.value);
    for (const b of booted) if (b.status === 'rejected') throw b.reason;
    policyLabel.set(g(0), 'at acquire: allowOut A, denyOut 203.0.113.0/24');
    policyLabel.set(g(1), 'default');
    const bootMs = Math.round(performance.now() - t0);
    for (const guest of guests)
      console.log(`${guest.label} boot (ms from boot()): ${JSON.stringify(guest.timings)}`);
    console.log(`two guests booted side by side in ${bootMs} ms (driver ${driver.kind})`);
  });

  after(async () => {
    const tTeardown = performance.now();
    // What the leak census sees while everything runs: proof that it would see a leak.
    const live = topo !== undefined && guests.length === 2 ? await census(topo) : undefined;
    const errors: unknown[] = [];
    for (const guest of guests) await guest.close().catch((e: unknown) => errors.push(e));
    for (const slot of slots) await manager?.release(slot).catch((e: unknown) => errors.push(e));
    await manager?.close().catch((e: unknown) => errors.push(e));
    let left: Partial<Census> & Record<string, string[]> = {};
    if (topo !== undefined) {
      left = await census(topo);
      await topo.close();
      left.netns = await topo.leftovers();
      const id = topo.id;
      left.rootLinks = (await sh('ip -o link show')).split('\n').filter((l) => l.includes(id));
      left.rootTables = (await sh('nft list tables')).split('\n').filter((l) => l.includes(id));
    }
    console.log(`teardown and leak checks: ${Math.round(performance.now() - tTeardown)} ms`);
    if (cells.length > 0) printMatrix(cells);
    console.log(`suite wall time: ${Math.round(performance.now() - suiteStart)} ms`);
    assert.deepEqual(errors, [], 'cleanup failed');
    if (live !== undefined) {
      assert.equal(live.qemu.length, 2, `the census sees both QEMUs: ${live.qemu.join('; ')}`);
      assert.equal(live.slotNetns.length, 2, 'the census sees both slot namespaces');
      assert.equal(live.hostLinks.length, 2, 'the census sees both slot veths');
      assert.equal(live.hostTables.length, 1, 'the census sees the node table');
    }
    for (const [what, items] of Object.entries(left)) assert.deepEqual(items, [], `${what} left`);
  });

  it('host reaches each guest envd at its slot address; DNAT lands in that guest', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    for (const guest of guests) {
      const health = await guest.envd.fetch('GET', '/health');
      assert.equal(health.status, 204, `host -> ${guest.label} envd /health`);
      const who = await guest.envd.run('/bin/sh', ['-c', 'hostname; hostname -I']);
      assert.equal(who.exitCode, 0, who.stderr);
      const [name, addrs] = who.stdout.trim().split('\n');
      assert.equal(name, guest.label, 'the slot address reaches its own guest');
      assert.equal(addrs?.trim(), GUEST_IP, 'every guest has the same address');
      // Also the positive control for "guest -> other slot": envd answers on slotIp.
      cells.push({
        from: 'host',
        policy: '-',
        to: `${guest.label} envd (slotIp:49983)`,
        outcome: 'ok',
      });
    }
  });

  it('positive controls: the host namespace reaches every world address and its own service', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const targets = Object.values(WORLD).filter((a) => a !== WORLD.gateway);
    for (const addr of [...targets, ...slots.map((s) => s.hostIp)]) {
      assertReach(await host.connect(addr, SERVICE_PORT), 'ok', `host -> ${addr}`);
    }
    assertReach(await host.connect(WORLD.publicA, OTHER_PORT), 'ok', 'host -> A:8081');
  });

  it('policy given at acquire: allowOut beats denyOut; egress is masqueraded', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const hello = await g(0).probe.connect(WORLD.publicA, SERVICE_PORT);
    assert.equal(hello.text, `hello world ${WORLD.hostUplink}`, 'egress leaves masqueraded');
    await checkAll(g(0), [
      { to: WORLD.publicA, expect: 'ok', what: 'world A (allowOut)' },
      { to: WORLD.publicA2, expect: 'blocked', what: 'world A2 (denyOut)' },
      { to: WORLD.publicB, expect: 'ok', what: 'world B' },
    ]);
  });

  it('default policy: internet yes; private, metadata, host services and other slot no', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const [s1, s2] = slots as [Slot, Slot];
    await checkAll(g(1), [
      { to: WORLD.publicA, expect: 'ok', what: 'world A' },
      { to: WORLD.publicB, expect: 'ok', what: 'world B' },
      { to: WORLD.private10, expect: 'blocked', what: '10.99.0.10' },
      { to: WORLD.private172, expect: 'blocked', what: '172.20.0.10' },
      { to: WORLD.private192, expect: 'blocked', what: '192.168.77.10' },
      { to: WORLD.cgnat, expect: 'blocked', what: '100.64.5.10' },
      { to: WORLD.metadata, expect: 'blocked', what: 'metadata' },
      { to: WORLD.hostUplink, expect: 'blocked', what: 'host uplink service' },
      { to: s2.hostIp, expect: 'blocked', what: 'host service on own slot link' },
      { to: s1.hostIp, expect: 'blocked', what: 'host service on g1 link' },
      { to: s1.slotIp, port: ENVD_PORT, expect: 'blocked', what: 'g1 envd (slotIp)' },
    ]);
    await checkAll(g(0), [
      { to: s2.slotIp, port: ENVD_PORT, expect: 'blocked', what: 'g2 envd (slotIp)' },
      { to: s2.hostIp, expect: 'blocked', what: 'host service on g2 link' },
    ]);
  });

  it('policy updates on the running guest take effect at once', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const guest = g(0);
    const times: number[] = [];
    times.push(
      await setPolicy(
        guest,
        'allow_internet_access=false, allowOut A',
        policy({ allow_internet_access: false, allowOut: [WORLD.publicA] }),
      ),
    );
    await checkAll(guest, [
      { to: WORLD.publicA, expect: 'ok', what: 'world A' },
      { to: WORLD.publicA2, expect: 'blocked', what: 'world A2' },
      { to: WORLD.publicB, expect: 'blocked', what: 'world B' },
    ]);
    const dns = await guest.probe.udp(GUEST_DNS, 53, 'query');
    assert.equal(dns.text, `world ${WORLD.hostUplink} query`, `DNS: ${JSON.stringify(dns)}`);
    cells.push({
      from: guest.label,
      policy: policyLabel.get(guest) ?? '?',
      to: 'DNS (udp 53 via gateway)',
      outcome: dns.outcome,
    });
    times.push(
      await setPolicy(
        guest,
        'allowOut A:8080, denyOut 0.0.0.0/0',
        policy({ allowOut: [`${WORLD.publicA}:${SERVICE_PORT}`], denyOut: ['0.0.0.0/0'] }),
      ),
    );
    await checkAll(guest, [
      { to: WORLD.publicA, port: SERVICE_PORT, expect: 'ok', what: 'world A' },
      { to: WORLD.publicA, port: OTHER_PORT, expect: 'blocked', what: 'world A' },
      { to: WORLD.publicB, expect: 'blocked', what: 'world B' },
    ]);
    times.push(
      await setPolicy(guest, 'denyOut 203.0.113.0/24', policy({ denyOut: ['203.0.113.0/24'] })),
    );
    await checkAll(guest, [
      { to: WORLD.publicA, expect: 'blocked', what: 'world A' },
      { to: WORLD.publicB, expect: 'ok', what: 'world B' },
    ]);
    const escape = [WORLD.private192, WORLD.metadata, '10.0.0.0/8', WORLD.hostUplink];
    times.push(
      await setPolicy(guest, 'allowOut private/metadata/host', policy({ allowOut: escape })),
    );
    await checkAll(guest, [
      { to: WORLD.private192, expect: 'blocked', what: '192.168.77.10' },
      { to: WORLD.private10, expect: 'blocked', what: '10.99.0.10' },
      { to: WORLD.metadata, expect: 'blocked', what: 'metadata' },
      { to: WORLD.hostUplink, expect: 'blocked', what: 'host uplink service' },
      { to: WORLD.publicB, expect: 'ok', what: 'world B' },
    ]);
    t.diagnostic(`applyPolicy on a running guest: ${times.map((x) => x.toFixed(1)).join(', ')} ms`);
  });

  it('a policy update keeps an established allowed flow and cuts a denied one', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const guest = g(1);
    const m = manager as SlotManager;
    assert.equal((await guest.probe.open('keep', WORLD.publicA, SERVICE_PORT)).outcome, 'ok');
    assert.equal((await guest.probe.open('cut', WORLD.publicB, SERVICE_PORT)).outcome, 'ok');
    assert.equal((await guest.probe.echo('cut', 'before')).text, 'before');

    let stop = false;
    let echoes = 0;
    const failures: string[] = [];
    const chatter = (async () => {
      while (!stop) {
        const a = await guest.probe.echo('keep', `n${echoes}`);
        if (a.outcome === 'ok' && a.text === `n${echoes}`) echoes++;
        else failures.push(JSON.stringify(a));
      }
    })();

    const denyB = policy({ denyOut: [WORLD.publicB] });
    const ms = await setPolicy(guest, 'denyOut B (updated while flows run)', denyB);
    t.diagnostic(`applyPolicy with established flows: ${ms.toFixed(1)} ms`);
    const cut = await guest.probe.echo('cut', 'gone');
    assert.notEqual(
      cut.outcome,
      'ok',
      `the flow the new rule denies stops: ${JSON.stringify(cut)}`,
    );
    await checkAll(guest, [
      { to: WORLD.publicB, expect: 'blocked', what: 'world B (new connection)' },
      { to: WORLD.publicA, expect: 'ok', what: 'world A (new connection)' },
    ]);
    const allowA = policy({ allowOut: [WORLD.publicA], denyOut: ['0.0.0.0/0'] });
    for (let i = 0; i < 10; i++) {
      await m.applyPolicy(guest.slot, i % 2 === 0 ? allowA : denyB);
    }
    stop = true;
    await chatter;
    assert.deepEqual(failures, [], 'the established allowed flow was disturbed');
    assert.ok(echoes > 5, `the allowed flow kept talking (${echoes} echoes)`);
    cells.push({
      from: guest.label,
      policy: '11 replacements during the flow',
      to: `established flow to world A (${echoes} echoes)`,
      outcome: 'ok',
    });
    cells.push({
      from: guest.label,
      policy: 'denyOut B',
      to: 'established flow to world B',
      outcome: cut.outcome,
    });
  });
});

type Census = Record<'qemu' | 'slotNetns' | 'hostLinks' | 'hostTables', string[]>;

/** What a run creates inside its topology: QEMU processes, slot namespaces, host veths, tables. */
async function census(topo: NetnsTopology): Promise<Census> {
  const nonEmpty = (text: string): string[] => text.split('\n').filter((l) => l.trim() !== '');
  const qemu = await exec('pgrep', ['-af', 'qemu-system']).catch(() => ({ stdout: '' }));
  const hostLinks = nonEmpty(await sh(`ip -n ${topo.hostNetns} -o link show`));
  return {
    qemu: nonEmpty(qemu.stdout).filter((l) => l.includes(topo.workDir)),
    slotNetns: (await topo.leftovers()).filter(
      (n) => n !== topo.hostNetns && n !== topo.worldNetns,
    ),
    hostLinks: hostLinks.filter((l) => !/^\d+: (lo|up0@\S+):/.test(l)),
    hostTables: nonEmpty(await sh(`ip netns exec ${topo.hostNetns} nft list tables`)),
  };
}

function printMatrix(cells: readonly Cell[]): void {
  console.log('| from | policy in force | to | outcome |');
  console.log('| --- | --- | --- | --- |');
  for (const c of cells) console.log(`| ${c.from} | ${c.policy} | ${c.to} | ${c.outcome} |`);
}
