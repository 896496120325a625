/**
 * Slot lifecycle against the real kernel: hundreds of slots created and
 * released leave nothing behind, a build that fails half-way leaks nothing,
 * the pool keeps its watermarks and scrubs what comes back, and two node
 * prefixes on one host never touch each other.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { CommandRunner, run, type RunOptions, type RunResult } from '../src/command-runner.js';
import { GATEWAY_MAC, TAP_NAME } from '../src/guest-network.js';
import { HostNetwork } from '../src/host-network.js';
import { formatIpv4, parseIpv4 } from '../src/ipv4.js';
import { resolveNetworkSettings } from '../src/network-config.js';
import { parseNetworkUpdate } from '../src/sandbox-network.js';
import { SlotManager } from '../src/slot-manager.js';
import type { Slot } from '../src/slot.js';
import { NetnsLab, SERVICE_PORT, WORLD, labSkipReason } from './support/netns-lab.js';
import { StandInGuests } from './support/stand-in-guest.js';

/** What a node of `prefix` has in the kernel right now. */
async function inventory(lab: NetnsLab, prefix: string) {
  const netns = (await lab.managerLeftovers()).filter((n) => n.startsWith(`${prefix}-`));
  const { stdout } = await run(['ip', '-n', lab.hostNetns, '-j', 'link', 'show']);
  const links = (JSON.parse(stdout) as { ifname: string }[])
    .map((l) => l.ifname)
    .filter((n) => n.startsWith(`${prefix}-`));
  const tables = (await run(['ip', 'netns', 'exec', lab.hostNetns, 'nft', 'list', 'tables']))
    .stdout;
  const table = tables.includes(`table inet ${prefix}_slots`);
  let chains: string[] = [];
  if (table) {
    const { stdout: t } = await run([
      'ip',
      'netns',
      'exec',
      lab.hostNetns,
      'nft',
      'list',
      'table',
      'inet',
      `${prefix}_slots`,
    ]);
    chains = [...t.matchAll(/chain (s\d+) \{/g)].map((m) => m[1] as string);
  }
  return { netns, links, table, chains };
}

/** How many rules the policy chain of slot `index` holds. */
async function chainRules(lab: NetnsLab, prefix: string, index: number): Promise<number> {
  const { stdout } = await run([
    'ip',
    'netns',
    'exec',
    lab.hostNetns,
    'nft',
    'list',
    'chain',
    'inet',
    `${prefix}_slots`,
    `s${index}`,
  ]);
  const body = stdout
    .slice(stdout.indexOf(`chain s${index} {`))
    .split('\n')
    .slice(1);
  return body.filter((line) => line.trim() !== '' && line.trim() !== '}').length;
}

async function conntrackOf(netns: string, filter: string[] = []): Promise<string> {
  const { stdout } = await run(['ip', 'netns', 'exec', netns, 'conntrack', '-L', ...filter]);
  return stdout.trim();
}

/** A real runner that fails the `n`-th command matching `pattern` (fault injection). */
class FailingRunner extends CommandRunner {
  #left: number;
  readonly #pattern: RegExp;

  constructor(netnsPath: string, pattern: RegExp, n: number) {
    super(netnsPath);
    this.#pattern = pattern;
    this.#left = n;
  }

  #maybeFail(argv: readonly string[], options: RunOptions): void {
    if (!this.#pattern.test(`${argv.join(' ')}\n${options.input ?? ''}`)) return;
    if (--this.#left === 0)
      throw new AenvError('NET_COMMAND_FAILED', `injected failure: ${argv.join(' ')}`);
  }

  override host(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    this.#maybeFail(argv, options);
    return super.host(argv, options);
  }

  override inNetns(
    path: string,
    argv: readonly string[],
    options: RunOptions = {},
  ): Promise<RunResult> {
    this.#maybeFail([path, ...argv], options);
    return super.inNetns(path, argv, options);
  }
}

describe('slot lifecycle', { timeout: 300_000 }, () => {
  let skip: string | undefined;
  let lab: NetnsLab | undefined;

  before(async () => {
    skip = await labSkipReason();
    if (skip !== undefined) return;
    lab = await NetnsLab.create();
    const world = await lab.probe(lab.worldNetns, 'world');
    assert.equal((await world.listen(SERVICE_PORT)).outcome, 'ok');
  });

  after(async () => {
    await lab?.close();
  });

  it('200 slots created and released in a loop leave nothing behind', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const l = lab as NetnsLab;
    const config = l.config({ slotPool: { low: 2, high: 6 } });
    const manager = await SlotManager.start({ config, netns: l.hostNetns });
    const t0 = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < 200) {
        const i = next++;
        const slot = await manager.acquire(
          i % 3 === 0 ? parseNetworkUpdate({ denyOut: ['0.0.0.0/0'] }) : undefined,
        );
        await manager.release(slot);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const loopMs = performance.now() - t0;
    const held: Slot[] = [];
    for (let i = 0; i < 64; i++) held.push(await manager.acquire());
    assert.equal(new Set(held.map((s) => s.index)).size, 64);
    assert.equal(manager.stats().inUse, 64);
    await Promise.all(held.map((s) => manager.release(s)));
    const during = await inventory(l, config.prefix);
    assert.ok(during.netns.length <= 6 && during.links.length <= 6, JSON.stringify(during));
    await manager.close();
    t.diagnostic(`200 acquire/release cycles (4 in parallel, pool 2/6): ${loopMs.toFixed(0)} ms`);
    assert.deepEqual(await inventory(l, config.prefix), {
      netns: [],
      links: [],
      table: false,
      chains: [],
    });
    assert.equal(await conntrackOf(l.hostNetns, ['-s', '10.200.0.0/16']), '');
  });

  it('a build that fails half-way leaks nothing', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const l = lab as NetnsLab;
    const config = l.config();
    const settings = resolveNetworkSettings(config);
    const points: [string, RegExp, number][] = [
      ['host rules', /^nft -f -\nadd set/, 1],
      ['second slot netns', /-1 sh -s\n/, 1],
      ['first slot netns', /-0 sh -s\n/, 1],
    ];
    for (const [where, pattern, n] of points) {
      const runner = new FailingRunner(`/run/netns/${l.hostNetns}`, pattern, n);
      const host = new HostNetwork(settings, runner, WORLD.dns);
      await host.installTable([]);
      await assert.rejects(host.build([0, 1, 2]), /injected failure/, where);
      assert.deepEqual(await host.discover(), [], `${where}: kernel objects left`);
      assert.deepEqual(
        await inventory(l, config.prefix),
        { netns: [], links: [], table: true, chains: [] },
        where,
      );
      await host.removeTable();
    }
  });

  it('the pool refills between its watermarks and scrubs released slots', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const l = lab as NetnsLab;
    const events: Record<string, unknown>[] = [];
    const onAcquire = (m: unknown): void => void events.push(m as Record<string, unknown>);
    subscribe('aenv:network:slot-acquire', onAcquire);
    const config = l.config({ slotPool: { low: 2, high: 3 } });
    const prefix = config.prefix;
    const manager = await SlotManager.start({ config, netns: l.hostNetns });
    try {
      await until(() => manager.stats().ready === 3);
      const slot = await manager.acquire();
      assert.equal(events.at(-1)?.['stage'], 'pool');
      assert.equal(manager.stats().ready, 2, 'two ready is not below low: no refill');
      const guest = await new StandInGuests(l).start(slot, 'scrubbed');
      assert.equal((await guest.probe.open('c', WORLD.publicA, SERVICE_PORT)).outcome, 'ok');
      const subnet = `${formatIpv4((parseIpv4(slot.hostIp) as number) - 1)}/30`;
      assert.notEqual(await conntrackOf(l.hostNetns, ['-s', subnet]), '');
      assert.notEqual(await conntrackOf(slot.netnsName), '');
      await guest.close();
      await manager.release(slot);
      assert.equal(manager.stats().ready, 3, 'released slot went back to the pool');
      assert.equal(await conntrackOf(l.hostNetns, ['-s', subnet]), '', 'host conntrack scrubbed');
      assert.equal(await conntrackOf(slot.netnsName), '', 'slot conntrack scrubbed');
      const { stdout } = await run([
        'ip',
        '-n',
        slot.netnsName,
        '-d',
        '-j',
        'link',
        'show',
        TAP_NAME,
      ]);
      const [tap] = JSON.parse(stdout) as { address: string; linkinfo?: { info_kind?: string } }[];
      assert.equal(tap?.linkinfo?.info_kind, 'tun', 'a fresh tap replaced what the guest used');
      assert.equal(tap?.address, GATEWAY_MAC);
      assert.equal(await chainRules(l, prefix, slot.index), 0, 'no policy left in the pool');

      // Drain the pool (first in, first out): it refills to high in the background.
      const taken = [await manager.acquire(), await manager.acquire(), await manager.acquire()];
      await until(() => manager.stats().ready === 3);
      const reused = taken.some((s) => s.index === slot.index);
      assert.ok(reused, 'the scrubbed slot was handed out again');
      const again = taken.find((s) => s.index === slot.index) as Slot;
      const g2 = await new StandInGuests(l).start(again, 'reused');
      assert.equal((await g2.probe.connect(WORLD.publicA, SERVICE_PORT)).outcome, 'ok');
      await g2.close();
      for (const s of taken) await manager.release(s);
    } finally {
      unsubscribe('aenv:network:slot-acquire', onAcquire);
      await manager.close();
    }
  });

  it('two node prefixes on one host never touch each other', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const l = lab as NetnsLab;
    const pool0 = { slotPool: { low: 0, high: 0 } };
    const cx = l.config(pool0);
    const cy = l.config({ ...pool0, addressPool: '10.202.0.0/24' });
    const x = await SlotManager.start({ config: cx, netns: l.hostNetns });
    const y = await SlotManager.start({ config: cy, netns: l.hostNetns });
    try {
      const sx = await x.acquire();
      const sy = await y.acquire();
      await x.close({ keepInUse: true });
      assert.deepEqual(
        (await inventory(l, cx.prefix)).netns,
        [sx.netnsName],
        'keepInUse keeps leased slots',
      );
      // x restarts without adopting anything: its leftover goes, y's slot stays.
      const x2 = await SlotManager.start({ config: cx, netns: l.hostNetns });
      assert.deepEqual(await inventory(l, cx.prefix), {
        netns: [],
        links: [],
        table: true,
        chains: [],
      });
      assert.deepEqual(await inventory(l, cy.prefix), {
        netns: [sy.netnsName],
        links: [sy.hostInterface],
        table: true,
        chains: [`s${sy.index}`],
      });
      await x2.close();
      assert.deepEqual(await inventory(l, cx.prefix), {
        netns: [],
        links: [],
        table: false,
        chains: [],
      });
      assert.equal((await inventory(l, cy.prefix)).table, true);
    } finally {
      await y.close();
    }
    assert.deepEqual(await inventory(l, cy.prefix), {
      netns: [],
      links: [],
      table: false,
      chains: [],
    });
  });
});

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
