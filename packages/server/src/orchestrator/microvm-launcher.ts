/**
 * The real launcher: a sandbox is a microVM. For each launch it leases a
 * network slot, gets the rootfs disk (from the storage engine: an NBD export
 * of the template's layers with a fresh upper in the sandbox directory), and
 * boots the guest (kernel, initramfs, tools image) with the VMM driver
 * inside the slot's netns; QEMU's built-in NBD client attaches the rootfs.
 * Every step registers its undo in a `Cleanup`, so a failure or an abort
 * half-way leaves nothing; `stop()` runs the same undo stack (the VM, then
 * the disk and its upper, the slot, the directory).
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
  type SlotManager,
} from '@aenv/network';
import { Cleanup } from '@aenv/shared';
import type { Vm, VmmDriver } from '@aenv/vmm';
import type { SandboxDisk, SandboxDisks } from '../storage/sandbox-disk.js';
import type { LaunchedSandbox, LaunchExit, LaunchSpec, SandboxLauncher } from './launcher.js';

/** What the microVM launcher runs on. */
export interface MicroVmLauncherOptions {
  readonly driver: VmmDriver;
  readonly slots: SlotManager;
  readonly artifacts: GuestArtifacts;
  /** Where rootfs disks come from: the storage engine (`NodeStorage`). */
  readonly disks: SandboxDisks;
  /** Per-sandbox state directories live here (`$AENV_HOME/sandboxes`). */
  readonly sandboxesDir: string;
  /** Called with cleanup failures that happen outside a caller's await. */
  readonly onCleanupError?: (err: unknown, label: string) => void;
}

/** A launched microVM sandbox. */
export interface MicroVmSandbox extends LaunchedSandbox {
  /**
   * The rootfs disk: `disk.seal()` turns what the sandbox wrote into a
   * layer and continues on a fresh upper (what pause and snapshot build on).
   */
  readonly disk: SandboxDisk;
}

/** Launches sandboxes as microVMs. */
export class MicroVmLauncher implements SandboxLauncher {
  readonly #o: MicroVmLauncherOptions;

  constructor(options: MicroVmLauncherOptions) {
    this.#o = options;
  }

  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<MicroVmSandbox> {
    const { artifacts, slots, driver, disks } = this.#o;
    const startedAt = performance.now();
    const onLateError = this.#o.onCleanupError;
    await using cleanup = new Cleanup(onLateError === undefined ? {} : { onLateError });
    const dir = join(this.#o.sandboxesDir, spec.sandboxId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    cleanup.add('remove sandbox dir', () => rm(dir, { recursive: true, force: true }));
    const slot = await slots.acquire(spec.egress, { sandboxId: spec.sandboxId });
    cleanup.add('release slot', () => slots.release(slot));
    signal.throwIfAborted();
    const disk = await disks.open({ sandboxId: spec.sandboxId, templateId: spec.templateId, dir });
    cleanup.add('close disk', () => disk.close());
    signal.throwIfAborted();
    const vm = await driver.boot(
      {
        id: spec.sandboxId,
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
        drives: [
          {
            id: artifacts.driveIds.rootfs,
            source: disk.source,
            readOnly: false,
          },
          {
            id: artifacts.driveIds.tools,
            source: { kind: 'file', path: artifacts.toolsImage, format: 'raw' },
            readOnly: true,
          },
        ],
        network: { netns: slot.netnsPath, tap: slot.tapName, mac: GUEST_MAC },
        runDir: join(dir, 'run'),
        serialLog: join(dir, 'serial.log'),
      },
      signal,
    );
    const vmmRunningAt = performance.now();
    cleanup.add('stop vm', async () => void (await vm.stop()));
    const initStartedAt = vm
      .waitForConsole(new RegExp(INIT_STARTED_MARKER), { timeoutMs: 120_000 })
      .then(
        () => performance.now(),
        () => undefined,
      );
    signal.throwIfAborted();
    const owned = cleanup.move(onLateError === undefined ? {} : { onLateError });
    return {
      marks: { startedAt, vmmRunningAt, initStartedAt },
      address: (port) => ({ host: slot.slotIp, port }),
      applyEgress: (policy) => slots.applyPolicy(slot, policy),
      exited: exitOf(vm),
      disk,
      stop: () => owned.run(),
    };
  }

  close(): Promise<void> {
    return this.#o.slots.close();
  }
}

async function exitOf(vm: Vm): Promise<LaunchExit> {
  const info = await vm.wait();
  const detail = info.message === undefined ? '' : `: ${info.message}`;
  return {
    reason: `${info.reason} (code ${String(info.code)}, signal ${String(info.signal)})${detail}`,
  };
}
