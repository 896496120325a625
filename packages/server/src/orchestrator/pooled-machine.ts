/**
 * A machine prepared ahead of need for one template snapshot: a network
 * slot leased with a deny-all egress policy, the snapshot's disk served
 * with a fresh upper, and a VMM started on the snapshot by
 * `driver.prepareRestore`, waiting for its device state. It belongs to no
 * sandbox until the launcher takes it: then the sandbox's egress policy is
 * applied to the slot and the restore is completed under the sandbox's id.
 *
 * Names are neutral (`pool-<id>`: the directory under `$AENV_HOME/sandboxes`,
 * the VM's run directory and pid file, the disk's export) because the
 * sandbox that takes the machine is not known yet. The directory holds
 * `run/qemu.pid` like a sandbox's, so a daemon killed with pooled machines
 * leaves nothing that `removeLeftoverSandboxes` does not remove; a taken
 * machine's sandbox directory is a symbolic link to its pool directory.
 *
 * @module
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { GuestArtifacts } from '@aenv/guest';
import { DENY_ALL_EGRESS_POLICY, type Slot, type SlotManager } from '@aenv/network';
import { Cleanup, newId } from '@aenv/shared';
import type { PreparedRestore, VmmDriver } from '@aenv/vmm';
import { UPPER_DIR_NAME } from '../storage/node-storage.js';
import type { SandboxDisk, SandboxDisks } from '../storage/sandbox-disk.js';
import type { MachineSnapshot } from './launcher.js';
import { machineSpec } from './microvm-spec.js';

/** Name prefix of pooled machines (directory, VM id, disk export). */
export const POOLED_PREFIX = 'pool-';

/** What preparing machines needs (the launcher's parts). */
export interface PooledMachineDeps {
  readonly driver: VmmDriver;
  readonly slots: SlotManager;
  readonly disks: SandboxDisks;
  readonly artifacts: GuestArtifacts;
  /** `$AENV_HOME/sandboxes`. */
  readonly sandboxesDir: string;
}

/** A prepared machine. */
export interface PooledMachine {
  /** `pool-<id>`: its directory's name, its prepared VM id and its disk's export name. */
  readonly name: string;
  readonly dir: string;
  readonly snapshot: MachineSnapshot;
  readonly slot: Slot;
  readonly disk: SandboxDisk;
  readonly prepared: PreparedRestore;
  /** Releases everything (the VMM if still waiting, disk, slot, directory), in that order. */
  readonly cleanup: Cleanup;
}

/**
 * Prepares one machine for `snapshot` (which must have a VMM directory).
 * Leaves nothing behind when it fails or `signal` aborts.
 */
export async function preparePooledMachine(
  deps: PooledMachineDeps,
  snapshot: MachineSnapshot,
  signal: AbortSignal,
): Promise<PooledMachine> {
  const cleanup = new Cleanup();
  try {
    const name = `${POOLED_PREFIX}${newId()}`;
    const dir = join(deps.sandboxesDir, name);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    cleanup.add('remove pooled dir', () => rm(dir, { recursive: true, force: true }));
    const slot = await deps.slots.acquire(DENY_ALL_EGRESS_POLICY, { sandboxId: name });
    cleanup.add('release slot', () => deps.slots.release(slot));
    signal.throwIfAborted();
    const upperDir = join(dir, UPPER_DIR_NAME);
    const disk = await deps.disks.openImage({ name, image: snapshot.image, upperDir });
    cleanup.add('close disk', () => disk.close());
    signal.throwIfAborted();
    const spec = machineSpec(deps.artifacts, name, { slot, disk, dir });
    const prepared = await deps.driver.prepareRestore(
      { dir: snapshot.dir as string },
      spec,
      signal,
    );
    cleanup.add('cancel prepared restore', () => prepared.cancel());
    signal.throwIfAborted();
    return { name, dir, snapshot, slot, disk, prepared, cleanup };
  } catch (err) {
    await cleanup.run();
    throw err;
  }
}
