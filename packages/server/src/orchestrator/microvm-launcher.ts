/**
 * The real launcher: a sandbox is a microVM. For each launch it leases a
 * network slot, opens the rootfs disk (an NBD export of the source image's
 * layers with a fresh upper in the sandbox directory), and either boots the
 * guest (kernel, initramfs, tools image) or restores a snapshot, with the
 * VMM driver inside the slot's netns. Every step registers its undo in a
 * `Cleanup`, so a failure or an abort half-way leaves nothing; `stop()` and
 * `suspend()` run the same undo stack (the VM, the disk and its upper, the
 * slot, the directory).
 *
 * With a {@link RestorePool}, a restore of a pooled template snapshot takes
 * a prepared machine instead (slot, disk and a waiting VMM already there):
 * the sandbox's egress policy is applied to its slot, the restore completes
 * under the sandbox's id, and `$AENV_HOME/sandboxes/<id>` becomes a link to
 * the machine's `pool-<id>` directory (where its serial log is). If taking
 * it fails, the machine is released and the launch restores the ordinary
 * way. When the node is out of slots, a pooled machine gives its slot back.
 *
 * @module
 */
import { mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { INIT_STARTED_MARKER, type GuestArtifacts } from '@aenv/guest';
import {
  GUEST_DNS,
  GUEST_GATEWAY,
  GUEST_IP,
  GUEST_PREFIX_LENGTH,
  type Slot,
  type SlotManager,
} from '@aenv/network';
import { AenvError, Cleanup } from '@aenv/shared';
import type { Vm, VmmDriver } from '@aenv/vmm';
import { UPPER_DIR_NAME } from '../storage/node-storage.js';
import { noSpaceOr } from '../storage/no-space.js';
import type { SandboxDisk, SandboxDisks } from '../storage/sandbox-disk.js';
import type {
  LaunchedSandbox,
  LaunchExit,
  LaunchSpec,
  MachineSnapshot,
  SandboxLauncher,
  SuspendOptions,
} from './launcher.js';
import { crashPoint } from './crash-point.js';
import { machineSpec, type MachineParts } from './microvm-spec.js';
import type { PooledMachine } from './pooled-machine.js';
import type { RestorePool } from './restore-pool.js';

/** What the microVM launcher runs on. */
export interface MicroVmLauncherOptions {
  readonly driver: VmmDriver;
  readonly slots: SlotManager;
  readonly artifacts: GuestArtifacts;
  /** Where rootfs disks come from: the storage engine. */
  readonly disks: SandboxDisks;
  /** Per-sandbox state directories live here (`$AENV_HOME/sandboxes`). */
  readonly sandboxesDir: string;
  /** Prepared restores of template snapshots; the launcher closes it. */
  readonly pool?: RestorePool;
  /** Called with cleanup failures that happen outside a caller's await. */
  readonly onCleanupError?: (err: unknown, label: string) => void;
  /** Called when a pooled machine failed to start (the launch then restores the ordinary way). */
  readonly onPoolError?: (err: unknown) => void;
}

/** A launched microVM sandbox. */
export interface MicroVmSandbox extends LaunchedSandbox {
  /** The rootfs disk (`disk.seal()` continues on a fresh upper). */
  readonly disk: SandboxDisk;
  /** Whether it started from a prepared restore of the pool. */
  readonly pooled: boolean;
}

/** A started VM and what it runs with. */
interface Started {
  readonly slot: Slot;
  readonly disk: SandboxDisk;
  readonly vm: Vm;
  readonly startedAt: number;
  readonly vmmRunningAt: number;
  readonly pooled: boolean;
}

/** Launches sandboxes as microVMs. */
export class MicroVmLauncher implements SandboxLauncher {
  readonly #o: MicroVmLauncherOptions;
  #launches = 0;

  constructor(options: MicroVmLauncherOptions) {
    this.#o = options;
  }

  /** The pool of prepared restores, if any. */
  get pool(): RestorePool | undefined {
    return this.#o.pool;
  }

  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<MicroVmSandbox> {
    const dir = spec.source.kind === 'restore' ? spec.source.snapshot.dir : undefined;
    const pooled = dir === undefined ? undefined : this.#o.pool?.take(dir);
    if (pooled !== undefined) {
      try {
        return await this.#launchPooled(spec, pooled, signal);
      } catch (err) {
        if (signal.aborted) throw err;
        this.#o.onPoolError?.(err);
      }
    }
    return this.#launchFresh(spec, signal);
  }

  close(): Promise<void> {
    const pool = this.#o.pool?.close() ?? Promise.resolve();
    return pool.finally(() => this.#o.slots.close());
  }

  async #launchFresh(spec: LaunchSpec, signal: AbortSignal): Promise<MicroVmSandbox> {
    const { disks } = this.#o;
    const startedAt = performance.now();
    await using cleanup = this.#cleanup();
    const dir = join(this.#o.sandboxesDir, spec.sandboxId);
    await mkdir(this.#o.sandboxesDir, { recursive: true, mode: 0o700 });
    // Not recursive: a recursive mkdir reports a full disk as ENOENT (a 500, not a 507).
    await mkdir(dir, { mode: 0o700 }).catch((err: unknown) => {
      if ((err as { code?: unknown }).code !== 'EEXIST') throw err;
    });
    cleanup.add('remove sandbox dir', () => rm(dir, { recursive: true, force: true }));
    const slot = await this.#acquireSlot(spec);
    cleanup.add('release slot', () => this.#o.slots.release(slot));
    crashPoint('launch.slot-taken');
    signal.throwIfAborted();
    const image = spec.source.kind === 'boot' ? spec.source.image : spec.source.snapshot.image;
    const disk = await disks.openImage({
      name: spec.sandboxId,
      image,
      upperDir: join(dir, UPPER_DIR_NAME),
    });
    cleanup.add('close disk', () => disk.close());
    crashPoint('launch.upper-created');
    signal.throwIfAborted();
    const vm = await this.#start(spec, { slot, disk, dir }, signal);
    const vmmRunningAt = performance.now();
    cleanup.add('stop vm', async () => void (await vm.stop()));
    signal.throwIfAborted();
    return this.#assemble(
      spec,
      { slot, disk, vm, startedAt, vmmRunningAt, pooled: false },
      cleanup,
    );
  }

  /**
   * Takes a prepared machine: the sandbox's directory becomes a link to the
   * pooled one, the slot gets the sandbox's egress policy, and the restore
   * completes under the sandbox's id.
   */
  async #launchPooled(
    spec: LaunchSpec,
    m: PooledMachine,
    signal: AbortSignal,
  ): Promise<MicroVmSandbox> {
    const startedAt = performance.now();
    await using cleanup = this.#cleanup();
    cleanup.add('release pooled machine', () => m.cleanup.run());
    const link = join(this.#o.sandboxesDir, spec.sandboxId);
    await symlink(m.name, link);
    cleanup.add('remove sandbox link', () => rm(link, { force: true }));
    await this.#o.slots.applyPolicy(m.slot, spec.egress);
    signal.throwIfAborted();
    const vm = await m.prepared.complete({ id: spec.sandboxId, signal });
    const vmmRunningAt = performance.now();
    cleanup.add('stop vm', async () => void (await vm.stop()));
    signal.throwIfAborted();
    const parts = { slot: m.slot, disk: m.disk, vm, startedAt, vmmRunningAt, pooled: true };
    return this.#assemble(spec, parts, cleanup);
  }

  /** A slot; when the node is out of them, one pooled machine gives its slot back first. */
  async #acquireSlot(spec: LaunchSpec): Promise<Slot> {
    const acquire = () => this.#o.slots.acquire(spec.egress, { sandboxId: spec.sandboxId });
    try {
      return await acquire();
    } catch (err) {
      const exhausted = err instanceof AenvError && err.code === 'NET_POOL_EXHAUSTED';
      if (!exhausted || !(await this.#o.pool?.shed())) throw err;
      return acquire();
    }
  }

  #cleanup(): Cleanup {
    const onLateError = this.#o.onCleanupError;
    return new Cleanup(onLateError === undefined ? {} : { onLateError });
  }

  /** The launched sandbox over a started VM; takes over `cleanup`'s steps. */
  #assemble(spec: LaunchSpec, s: Started, cleanup: Cleanup): MicroVmSandbox {
    const { slot, disk, vm } = s;
    const machine = `${spec.sandboxId}/${(++this.#launches).toString(36)}`;
    const initStartedAt =
      spec.source.kind === 'boot'
        ? vm.waitForConsole(new RegExp(INIT_STARTED_MARKER), { timeoutMs: 120_000 }).then(
            () => performance.now(),
            () => undefined,
          )
        : Promise.resolve(undefined);
    const onLateError = this.#o.onCleanupError;
    const owned = cleanup.move(onLateError === undefined ? {} : { onLateError });
    return {
      marks: { startedAt: s.startedAt, vmmRunningAt: s.vmmRunningAt, initStartedAt },
      address: (port) => ({ host: slot.slotIp, port, machine }),
      applyEgress: (policy) => this.#o.slots.applyPolicy(slot, policy),
      exited: unexpectedExit(vm),
      disk,
      pooled: s.pooled,
      suspend: (options) => suspend(vm, disk, owned, options),
      checkpoint: (dir) => checkpoint(vm, disk, dir),
      stop: () => owned.run(),
    };
  }

  #start(spec: LaunchSpec, parts: MachineParts, signal: AbortSignal): Promise<Vm> {
    const { artifacts, driver } = this.#o;
    const common = machineSpec(artifacts, spec.sandboxId, parts);
    const snapshotDir = spec.source.kind === 'restore' ? spec.source.snapshot.dir : undefined;
    if (snapshotDir !== undefined) return driver.restore({ dir: snapshotDir }, common, signal);
    return driver.boot(
      {
        ...common,
        vcpus: spec.vcpus,
        memoryMiB: spec.memoryMiB,
        kernel: artifacts.kernel,
        initrd: artifacts.initrd,
        guest: {
          hostname: 'sandbox',
          address: `${GUEST_IP}/${GUEST_PREFIX_LENGTH}`,
          gateway: GUEST_GATEWAY,
          dns: [GUEST_DNS],
        },
      },
      signal,
    );
  }
}

/**
 * Pause → seal → save (or stop) → release. The disk is sealed while the VM
 * is paused (its block I/O drained and flushed, so nothing is written after)
 * and can still resume: a full disk or a blob store that is down fails the
 * pause with the sandbox running, instead of after its VMM is gone. The
 * memory snapshot is then taken of the same, unchanged disk.
 */
async function suspend(
  vm: Vm,
  disk: SandboxDisk,
  owned: Cleanup,
  options: SuspendOptions,
): Promise<MachineSnapshot> {
  await vm.pause();
  crashPoint('pause.vm-paused');
  let sealed;
  try {
    sealed = await disk.seal();
    if (options.keepMemory) await vm.snapshot({ dir: options.dir, after: 'stop' });
    else await vm.stop();
  } catch (err) {
    if (vm.state === 'paused') await vm.resume();
    throw noSpaceOr(err, 'pausing the sandbox');
  }
  crashPoint('pause.state-written');
  await owned.run();
  return { dir: options.keepMemory ? options.dir : undefined, image: sealed.image };
}

/**
 * Pause → save (VM kept) → seal → resume. The guest is frozen only while
 * its state is saved and the disk sealed; it resumes whatever happens.
 */
async function checkpoint(vm: Vm, disk: SandboxDisk, dir: string): Promise<MachineSnapshot> {
  await vm.pause();
  try {
    await vm.snapshot({ dir, after: 'pause' });
    const sealed = await disk.seal();
    return { dir, image: sealed.image };
  } catch (err) {
    throw noSpaceOr(err, 'snapshotting the sandbox');
  } finally {
    if (vm.state === 'paused') await vm.resume();
  }
}

/** Resolves only when the VM ends in a way nobody asked for. */
function unexpectedExit(vm: Vm): Promise<LaunchExit> {
  return new Promise((resolve) => {
    void vm.wait().then((info) => {
      if (info.reason !== 'guest' && info.reason !== 'crash') return;
      const detail = info.message === undefined || info.message === '' ? '' : `: ${info.message}`;
      resolve({
        reason: `${info.reason} (code ${String(info.code)}, signal ${String(info.signal)})${detail}`,
      });
    });
  });
}
