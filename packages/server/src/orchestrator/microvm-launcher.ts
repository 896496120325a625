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
 * @module
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { INIT_STARTED_MARKER, type GuestArtifacts } from '@aenv/guest';
import {
  GUEST_DNS,
  GUEST_GATEWAY,
  GUEST_IP,
  GUEST_MAC,
  GUEST_PREFIX_LENGTH,
  type Slot,
  type SlotManager,
} from '@aenv/network';
import { Cleanup } from '@aenv/shared';
import type { DriveSpec, Vm, VmmDriver } from '@aenv/vmm';
import { UPPER_DIR_NAME } from '../storage/node-storage.js';
import type { SandboxDisk, SandboxDisks } from '../storage/sandbox-disk.js';
import type {
  LaunchedSandbox,
  LaunchExit,
  LaunchSpec,
  MachineSnapshot,
  SandboxLauncher,
  SuspendOptions,
} from './launcher.js';

/** What the microVM launcher runs on. */
export interface MicroVmLauncherOptions {
  readonly driver: VmmDriver;
  readonly slots: SlotManager;
  readonly artifacts: GuestArtifacts;
  /** Where rootfs disks come from: the storage engine. */
  readonly disks: SandboxDisks;
  /** Per-sandbox state directories live here (`$AENV_HOME/sandboxes`). */
  readonly sandboxesDir: string;
  /** Called with cleanup failures that happen outside a caller's await. */
  readonly onCleanupError?: (err: unknown, label: string) => void;
}

/** A launched microVM sandbox. */
export interface MicroVmSandbox extends LaunchedSandbox {
  /** The rootfs disk (`disk.seal()` continues on a fresh upper). */
  readonly disk: SandboxDisk;
}

interface Parts {
  readonly slot: Slot;
  readonly disk: SandboxDisk;
  readonly dir: string;
}

/** Launches sandboxes as microVMs. */
export class MicroVmLauncher implements SandboxLauncher {
  readonly #o: MicroVmLauncherOptions;
  #launches = 0;

  constructor(options: MicroVmLauncherOptions) {
    this.#o = options;
  }

  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<MicroVmSandbox> {
    const { slots, disks } = this.#o;
    const startedAt = performance.now();
    const onLateError = this.#o.onCleanupError;
    await using cleanup = new Cleanup(onLateError === undefined ? {} : { onLateError });
    const dir = join(this.#o.sandboxesDir, spec.sandboxId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    cleanup.add('remove sandbox dir', () => rm(dir, { recursive: true, force: true }));
    const slot = await slots.acquire(spec.egress, { sandboxId: spec.sandboxId });
    cleanup.add('release slot', () => slots.release(slot));
    signal.throwIfAborted();
    const image = spec.source.kind === 'boot' ? spec.source.image : spec.source.snapshot.image;
    const disk = await disks.openImage({
      name: spec.sandboxId,
      image,
      upperDir: join(dir, UPPER_DIR_NAME),
    });
    cleanup.add('close disk', () => disk.close());
    signal.throwIfAborted();
    const parts: Parts = { slot, disk, dir };
    const machine = `${spec.sandboxId}/${(++this.#launches).toString(36)}`;
    const vm = await this.#start(spec, parts, signal);
    const vmmRunningAt = performance.now();
    cleanup.add('stop vm', async () => void (await vm.stop()));
    const initStartedAt =
      spec.source.kind === 'boot'
        ? vm.waitForConsole(new RegExp(INIT_STARTED_MARKER), { timeoutMs: 120_000 }).then(
            () => performance.now(),
            () => undefined,
          )
        : Promise.resolve(undefined);
    signal.throwIfAborted();
    const owned = cleanup.move(onLateError === undefined ? {} : { onLateError });
    return {
      marks: { startedAt, vmmRunningAt, initStartedAt },
      address: (port) => ({ host: slot.slotIp, port, machine }),
      applyEgress: (policy) => slots.applyPolicy(slot, policy),
      exited: unexpectedExit(vm),
      disk,
      suspend: (options) => suspend(vm, disk, owned, options),
      checkpoint: (dir) => checkpoint(vm, disk, dir),
      stop: () => owned.run(),
    };
  }

  close(): Promise<void> {
    return this.#o.slots.close();
  }

  #start(spec: LaunchSpec, parts: Parts, signal: AbortSignal): Promise<Vm> {
    const { artifacts, driver } = this.#o;
    const drives: DriveSpec[] = [
      { id: artifacts.driveIds.rootfs, source: parts.disk.source, readOnly: false },
      {
        id: artifacts.driveIds.tools,
        source: { kind: 'file', path: artifacts.toolsImage, format: 'raw' },
        readOnly: true,
      },
    ];
    const common = {
      id: spec.sandboxId,
      drives,
      network: { netns: parts.slot.netnsPath, tap: parts.slot.tapName, mac: GUEST_MAC },
      runDir: join(parts.dir, 'run'),
      serialLog: join(parts.dir, 'serial.log'),
    };
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
 * Pause → save (or stop) → seal → release. Until the VMM is gone a failure
 * leaves the machine running; after it, the disk is sealed with a retry,
 * because the memory snapshot is only usable with the disk it was taken with.
 */
async function suspend(
  vm: Vm,
  disk: SandboxDisk,
  owned: Cleanup,
  options: SuspendOptions,
): Promise<MachineSnapshot> {
  await vm.pause();
  try {
    if (options.keepMemory) await vm.snapshot({ dir: options.dir, after: 'stop' });
    else await vm.stop();
  } catch (err) {
    if (vm.state === 'paused') await vm.resume();
    throw err;
  }
  let sealed;
  try {
    sealed = await disk.seal();
  } catch {
    sealed = await disk.seal();
  }
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
  } finally {
    if (vm.state === 'paused') await vm.resume();
  }
}

/** Resolves only when the VM ends in a way nobody asked for. */
function unexpectedExit(vm: Vm): Promise<LaunchExit> {
  return new Promise((resolve) => {
    void vm.wait().then((info) => {
      if (info.reason !== 'guest' && info.reason !== 'crash') return;
      const detail = info.message === undefined ? '' : `: ${info.message}`;
      resolve({
        reason: `${info.reason} (code ${String(info.code)}, signal ${String(info.signal)})${detail}`,
      });
    });
  });
}
