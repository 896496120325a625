/**
 * Crash safety: a node daemon killed with `kill -9` leaves slots, pool slots
 * and half-built slots behind; a manager started again with the same prefix
 * re-adopts the slots the daemon still needs (their flows survive) and
 * removes everything else. The killed daemon runs in a child process
 * (`support/manager-child.ts`); guests are STAND-INs.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { run } from '../src/command-runner.js';
import type { NetworkConfig } from '../src/network-config.js';
import { parseNetworkUpdate } from '../src/sandbox-network.js';
import { SlotManager } from '../src/slot-manager.js';
import type { Slot, SlotRecord } from '../src/slot.js';
import { NetnsLab, SERVICE_PORT, WORLD, labSkipReason } from './support/netns-lab.js';
import { StandInGuests, type TestGuest } from './support/stand-in-guest.js';

const CHILD = fileURLToPath(new URL('./support/manager-child.js', import.meta.url));

interface ChildReport {
  readonly started?: boolean;
  readonly slots?: Slot[];
  readonly records?: SlotRecord[];
}

/** Starts a manager child; resolves with its first report and a SIGKILL switch. */
async function startChild(
  spec: object,
): Promise<{ report: ChildReport; kill: () => Promise<void> }> {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const first = await new Promise<string | undefined>((resolve) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    void exited.then(() => resolve(undefined));
  });
  if (first === undefined) throw new Error(`manager child failed: ${stderr}`);
  return {
    report: JSON.parse(first) as ChildReport,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function prefixNetns(lab: NetnsLab, prefix: string): Promise<string[]> {
  return (await lab.managerLeftovers()).filter((n) => n.startsWith(`${prefix}-`)).sort();
}

async function prefixLinks(lab: NetnsLab, prefix: string): Promise<string[]> {
  const { stdout } = await run(['ip', '-n', lab.hostNetns, '-j', 'link', 'show']);
  return (JSON.parse(stdout) as { ifname: string }[])
    .map((l) => l.ifname)
    .filter((n) => n.startsWith(`${prefix}-`));
}

describe('crash recovery', { timeout: 180_000 }, () => {
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

  it('re-adopts the slots it is told to keep, with their flows, and removes the rest', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const l = lab as NetnsLab;
    const config: NetworkConfig = l.config({ slotPool: { low: 2, high: 3 } });
    const narrow = parseNetworkUpdate({ allowOut: [WORLD.publicA], denyOut: ['0.0.0.0/0'] });
    const { report, kill } = await startChild({
      config,
      netns: l.hostNetns,
      acquire: [narrow, parseNetworkUpdate({})],
    });
    const [kept, gone] = report.slots as [Slot, Slot];
    const records = report.records as SlotRecord[];
    let guest: TestGuest | undefined;
    let manager: SlotManager | undefined;
    try {
      guest = await new StandInGuests(l).start(kept, 'survivor');
      assert.equal((await guest.probe.open('live', WORLD.publicA, SERVICE_PORT)).outcome, 'ok');
      await kill();
      assert.equal(
        (await prefixNetns(l, config.prefix)).length,
        5,
        'two leased and three pooled slots are left',
      );
      // The second sandbox's slot vanished while the daemon was down.
      await run(['ip', 'netns', 'del', gone.netnsName]);

      const restart = { ...config, slotPool: { low: 0, high: 0 } };
      manager = await SlotManager.start({ config: restart, netns: l.hostNetns, adopt: records });
      assert.deepEqual(
        manager.adopted.map((s) => s.save()),
        [records[0]],
      );
      assert.deepEqual(manager.lost, [gone.index]);
      assert.deepEqual(await prefixNetns(l, config.prefix), [kept.netnsName]);
      await waitFor(
        async () => (await prefixLinks(l, config.prefix)).join() === kept.hostInterface,
      );

      const echo = await guest.probe.echo('live', 'after restart');
      assert.equal(echo.text, 'after restart', `the flow survived: ${JSON.stringify(echo)}`);
      assert.equal(
        (await guest.probe.connect(WORLD.publicB, SERVICE_PORT)).outcome,
        'refused',
        'policy kept',
      );
      const adopted = manager.adopted[0] as Slot;
      await manager.applyPolicy(adopted, parseNetworkUpdate({}));
      assert.equal(
        (await guest.probe.connect(WORLD.publicB, SERVICE_PORT)).outcome,
        'ok',
        'policy replaceable',
      );
      await guest.close();
      guest = undefined;
      await manager.release(adopted);
      await manager.close();
      manager = undefined;
      assert.deepEqual(await prefixNetns(l, config.prefix), []);
      assert.deepEqual(await prefixLinks(l, config.prefix), []);
    } finally {
      await kill();
      await guest?.close();
      await manager?.close();
    }
  });

  it('removes everything a daemon killed while building slots left', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const l = lab as NetnsLab;
    for (const delayMs of [0, 30, 120]) {
      const config: NetworkConfig = l.config({ slotPool: { low: 16, high: 16 } });
      const { kill } = await startChild({
        config,
        netns: l.hostNetns,
        acquire: [],
        printEarly: true,
      });
      await new Promise((r) => setTimeout(r, delayMs));
      await kill();
      const leftover = (await prefixNetns(l, config.prefix)).length;
      const manager = await SlotManager.start({
        config: { ...config, slotPool: { low: 0, high: 0 } },
        netns: l.hostNetns,
      });
      try {
        assert.deepEqual(await prefixNetns(l, config.prefix), [], `killed after ${delayMs} ms`);
        await waitFor(async () => (await prefixLinks(l, config.prefix)).length === 0);
        t.diagnostic(`killed ${delayMs} ms into the first build: ${leftover} namespaces reclaimed`);
        const slot = await manager.acquire();
        assert.equal(slot.index, 0, 'indices start over');
      } finally {
        await manager.close();
      }
    }
  });
});

async function waitFor(cond: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
