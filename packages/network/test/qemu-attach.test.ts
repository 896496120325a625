/**
 * The contract with the VMM driver, checked with the real QEMU (no guest
 * runs: `-S` stops the VM before its first instruction): QEMU started inside
 * `slot.netnsPath` attaches a virtio-net device with `GUEST_MAC` to the
 * slot's persistent tap `slot.tapName`, and a slot released after QEMU is
 * gone is scrubbed into the pool with a fresh tap and works again.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { run } from '../src/command-runner.js';
import { GUEST_MAC } from '../src/guest-network.js';
import { SlotManager } from '../src/slot-manager.js';
import type { Slot } from '../src/slot.js';
import { NetnsLab, SERVICE_PORT, WORLD, labSkipReason } from './support/netns-lab.js';
import { StandInGuests } from './support/stand-in-guest.js';

const QEMU = 'qemu-system-x86_64';

async function tapFlags(slot: Slot): Promise<string[]> {
  const { stdout } = await run(['ip', '-n', slot.netnsName, '-j', 'link', 'show', slot.tapName]);
  return (JSON.parse(stdout) as { flags: string[] }[])[0]?.flags ?? [];
}

async function waitFor(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('QEMU on a slot tap', { timeout: 60_000 }, () => {
  let skip: string | undefined;
  let lab: NetnsLab | undefined;
  let manager: SlotManager | undefined;

  before(async () => {
    skip = await labSkipReason();
    if (skip === undefined) {
      skip = await run([QEMU, '--version']).then(
        () => undefined,
        () => `needs ${QEMU} (qemu-system-x86 in scripts/apt-packages.txt)`,
      );
    }
    if (skip !== undefined) return;
    lab = await NetnsLab.create();
    const world = await lab.probe(lab.worldNetns, 'world');
    assert.equal((await world.listen(SERVICE_PORT)).outcome, 'ok');
    manager = await SlotManager.start({
      config: lab.config({ slotPool: { low: 0, high: 1 } }),
      netns: lab.hostNetns,
    });
  });

  after(async () => {
    await manager?.close();
    const left = (await lab?.managerLeftovers()) ?? [];
    await lab?.close();
    assert.deepEqual(left, []);
  });

  it('attaches to the tap inside the slot netns; the slot is reusable after', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const m = manager as SlotManager;
    const slot = await m.acquire();
    assert.ok(!(await tapFlags(slot)).includes('LOWER_UP'), 'no carrier before a VMM attaches');
    const qemu = spawn(
      'nsenter',
      [
        `--net=${slot.netnsPath}`,
        '--',
        QEMU,
        ...['-M', 'microvm', '-accel', 'tcg', '-S', '-nodefaults', '-no-user-config'],
        ...['-display', 'none', '-monitor', 'none', '-serial', 'none'],
        ...['-netdev', `tap,id=n0,ifname=${slot.tapName},script=no,downscript=no`],
        ...['-device', `virtio-net-device,netdev=n0,mac=${GUEST_MAC}`],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    qemu.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<void>((resolve) => qemu.once('exit', () => resolve()));
    try {
      await waitFor(async () => (await tapFlags(slot)).includes('LOWER_UP'));
    } catch (err) {
      throw new Error(`QEMU did not attach to ${slot.tapName}: ${stderr}`, { cause: err });
    } finally {
      qemu.kill('SIGKILL');
      await exited;
    }
    await m.release(slot);
    assert.equal(m.stats().ready, 1, 'scrubbed into the pool');
    const again = await m.acquire();
    assert.equal(again.index, slot.index);
    const guest = await new StandInGuests(lab as NetnsLab).start(again, 'after-qemu');
    try {
      assert.equal((await guest.probe.connect(WORLD.publicA, SERVICE_PORT)).outcome, 'ok');
    } finally {
      await guest.close();
      await m.release(again);
    }
  });
});
