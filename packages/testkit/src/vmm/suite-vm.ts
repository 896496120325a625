/**
 * One VM of a VM suite with what the suite needs around it: its network
 * (envd reachable through the network's forwarder), its rootfs drive, and
 * shell commands run as root through the real envd in the guest. Booting
 * and restoring go through the driver under test; `close()` stops the VM
 * and removes its network, also after a failure half-way.
 *
 * @module
 */
import { join } from 'node:path';
import { Cleanup } from '@aenv/shared';
import type { DriveSpec, PreparedRestore, RestoreSpec, Vm, VmmDriver } from '@aenv/vmm';
import type { SuiteNetwork } from '../network/tap-networks.js';
import type { SuiteDisks } from './suite-disks.js';

/** The guest every suite VM runs: boot files, the tools drive, disks and networks. */
export interface VmmSuiteGuest {
  /** PVH kernel. */
  readonly kernel: string;
  readonly initrd?: string;
  /** The read-only tools image (guest init, node runtime, envd). */
  readonly toolsImage: string;
  /** Drive ids the guest init expects. @default `{ rootfs: 'rootfs', tools: 'tools' }` */
  readonly driveIds?: { readonly rootfs: string; readonly tools: string };
  /** Writable rootfs drives (ids must be `driveIds.rootfs`). */
  readonly disks: SuiteDisks;
  /** One network per VM. */
  readonly network: (label: string) => Promise<SuiteNetwork>;
}

/** Where and how suite VMs are made. */
export interface SuiteVmContext {
  readonly driver: VmmDriver;
  readonly guest: VmmSuiteGuest;
  /** A directory of the suite's own (run directories go here). */
  readonly workDir: string;
  /** Prefix of every VM id of this run. */
  readonly idPrefix: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
}

/** How long a suite waits for envd in a new VM. */
export const ENVD_TIMEOUT_MS = 120_000;

/** See the module comment. */
export class SuiteVm {
  readonly label: string;
  readonly vm: Vm;
  readonly net: SuiteNetwork;
  readonly rootfs: DriveSpec;
  /** The VMM's pid when it started, to check later that it is gone. */
  readonly pid: number | undefined;
  /** How long the driver call that started it took (boot, restore or complete), ms. */
  readonly startMs: number;
  readonly #cleanup: Cleanup;

  private constructor(
    label: string,
    parts: { vm: Vm; net: SuiteNetwork; rootfs: DriveSpec; startMs: number },
    cleanup: Cleanup,
  ) {
    this.label = label;
    this.vm = parts.vm;
    this.net = parts.net;
    this.rootfs = parts.rootfs;
    this.pid = parts.vm.pid;
    this.startMs = parts.startMs;
    this.#cleanup = cleanup;
  }

  /** Boots a VM from a fresh disk over the base image. */
  static async boot(ctx: SuiteVmContext, label: string): Promise<SuiteVm> {
    await using cleanup = new Cleanup();
    const { net, rootfs } = await parts(ctx, label, cleanup, (d) => d.fresh(label));
    const t0 = performance.now();
    const vm = await ctx.driver.boot({
      id: `${ctx.idPrefix}-${label}`,
      vcpus: ctx.vcpus,
      memoryMiB: ctx.memoryMiB,
      kernel: ctx.guest.kernel,
      ...(ctx.guest.initrd === undefined ? {} : { initrd: ctx.guest.initrd }),
      guest: net.guest,
      drives: [rootfs, tools(ctx.guest)],
      network: net.spec,
      runDir: join(ctx.workDir, `run-${label}`),
    });
    const startMs = performance.now() - t0;
    cleanup.add('stop vm', async () => void (await vm.stop({ graceMs: 0 })));
    return new SuiteVm(label, { vm, net, rootfs, startMs }, cleanup.move());
  }

  /** Restores `snapshotDir` with a disk forked from `from` (the disk as of the snapshot). */
  static async restore(
    ctx: SuiteVmContext,
    label: string,
    snapshotDir: string,
    from: DriveSpec,
  ): Promise<SuiteVm> {
    await using cleanup = new Cleanup();
    const { net, rootfs } = await parts(ctx, label, cleanup, (d) => d.fork(from, label));
    const t0 = performance.now();
    const vm = await ctx.driver.restore({ dir: snapshotDir }, restoreSpec(ctx, label, net, rootfs));
    const startMs = performance.now() - t0;
    cleanup.add('stop vm', async () => void (await vm.stop({ graceMs: 0 })));
    return new SuiteVm(label, { vm, net, rootfs, startMs }, cleanup.move());
  }

  /**
   * Prepares a restore (`driver.prepareRestore`); `take` completes it under
   * the id `<prefix>-<takenLabel>` and wraps the VM.
   */
  static async prepare(
    ctx: SuiteVmContext,
    label: string,
    snapshotDir: string,
    from: DriveSpec,
  ): Promise<PreparedSuiteVm> {
    const cleanup = new Cleanup();
    try {
      const { net, rootfs } = await parts(ctx, label, cleanup, (d) => d.fork(from, label));
      const spec = restoreSpec(ctx, label, net, rootfs);
      const prepared = await ctx.driver.prepareRestore({ dir: snapshotDir }, spec);
      cleanup.add('cancel prepared restore', () => prepared.cancel());
      return new PreparedSuiteVm(label, prepared, { net, rootfs, cleanup, idPrefix: ctx.idPrefix });
    } catch (err) {
      await cleanup.run();
      throw err;
    }
  }

  /** Wraps a VM completed from a prepared restore (`startMs`: the completion). */
  static adopt(
    label: string,
    parts: { vm: Vm; net: SuiteNetwork; rootfs: DriveSpec; startMs: number },
    cleanup: Cleanup,
  ): SuiteVm {
    const { vm } = parts;
    cleanup.add('stop vm', async () => void (await vm.stop({ graceMs: 0 })));
    return new SuiteVm(label, parts, cleanup);
  }

  /** Waits until envd in the guest answers `/health`; resolves with the wait in ms. */
  waitForEnvd(timeoutMs = ENVD_TIMEOUT_MS): Promise<number> {
    return this.net.envd.waitHealthy(timeoutMs);
  }

  /**
   * Runs `script` with bash as root through envd.
   * @returns its stdout
   * @throws when it exits non-zero
   */
  async sh(script: string): Promise<string> {
    const r = await this.net.envd.run('/bin/bash', ['-c', script], { user: 'root' });
    if (r.exitCode !== 0) {
      throw new Error(
        `${this.label}: exit ${r.exitCode} from ${script.slice(0, 200)}: ${r.stderr}`,
      );
    }
    return r.stdout;
  }

  /** Whether envd answers within `timeoutMs`. */
  async envdAnswers(timeoutMs: number): Promise<boolean> {
    try {
      const r = await this.net.envd.fetch('GET', '/health', { timeoutMs });
      return r.status === 204;
    } catch {
      return false;
    }
  }

  /** Stops the VM and removes its network. Idempotent. */
  close(): Promise<void> {
    return this.#cleanup.run();
  }
}

/** A prepared restore with its network and disk, not yet taken. */
export class PreparedSuiteVm {
  readonly label: string;
  readonly prepared: PreparedRestore;
  readonly net: SuiteNetwork;
  readonly #rootfs: DriveSpec;
  readonly #cleanup: Cleanup;
  readonly #idPrefix: string;

  constructor(
    label: string,
    prepared: PreparedRestore,
    o: { net: SuiteNetwork; rootfs: DriveSpec; cleanup: Cleanup; idPrefix: string },
  ) {
    this.label = label;
    this.prepared = prepared;
    this.net = o.net;
    this.#rootfs = o.rootfs;
    this.#cleanup = o.cleanup;
    this.#idPrefix = o.idPrefix;
  }

  /** Completes the restore as VM `<prefix>-<takenLabel>`. */
  async take(takenLabel: string): Promise<SuiteVm> {
    const t0 = performance.now();
    const vm = await this.prepared.complete({ id: `${this.#idPrefix}-${takenLabel}` });
    const parts = { vm, net: this.net, rootfs: this.#rootfs, startMs: performance.now() - t0 };
    return SuiteVm.adopt(this.label, parts, this.#cleanup);
  }

  /** Cancels the restore and removes its network. */
  close(): Promise<void> {
    return this.#cleanup.run();
  }
}

function tools(guest: VmmSuiteGuest): DriveSpec {
  return {
    id: guest.driveIds?.tools ?? 'tools',
    source: { kind: 'file', path: guest.toolsImage, format: 'raw' },
    readOnly: true,
  };
}

function restoreSpec(
  ctx: SuiteVmContext,
  label: string,
  net: SuiteNetwork,
  rootfs: DriveSpec,
): RestoreSpec {
  return {
    id: `${ctx.idPrefix}-${label}`,
    drives: [rootfs, tools(ctx.guest)],
    network: net.spec,
    runDir: join(ctx.workDir, `run-${label}`),
  };
}

async function parts(
  ctx: SuiteVmContext,
  label: string,
  cleanup: Cleanup,
  disk: (d: SuiteDisks) => Promise<DriveSpec>,
): Promise<{ net: SuiteNetwork; rootfs: DriveSpec }> {
  const net = await ctx.guest.network(label);
  cleanup.add('close network', () => net.close());
  const rootfs = await disk(ctx.guest.disks);
  return { net, rootfs };
}
