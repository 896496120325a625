/**
 * The qemu driver: `qemu-system-x86_64 -M microvm`, KVM where the host has
 * hardware KVM, TCG (software emulation) elsewhere.
 *
 * - `boot`: QEMU starts paused (`-S`), QMP and the serial console attach,
 *   then `cont`; RAM is a shared memory file in the run directory.
 * - `restore`: QEMU starts with `-incoming defer` and the snapshot's machine
 *   shape and boot files; RAM maps the snapshot's memory file copy-on-write
 *   (through the private-RAM interposer), the snapshot's RAM diff is written
 *   into that mapping, the device state loads; then `cont`. See
 *   `qemu-snapshot.ts` and docs/snapshots.md.
 * - A snapshot is refused elsewhere than it came from: another driver,
 *   virtualization mode, QEMU version, kernel, drive set or MAC.
 * - QEMU runs under its own seccomp filter and, when configured, as an
 *   unprivileged user (`qemu-args.ts`); a configured guest kernel replaces
 *   the spec's at boot.
 *
 * Run-directory files: see `qemu-run-dir.ts`; all are removed when the VM
 * ends. The serial log (default `<runDir>/serial.log`) stays.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import type {
  ConsoleSpec,
  RestoreSpec,
  SnapshotRef,
  VirtualizationMode,
  Vm,
  VmmCapability,
  VmmDriver,
  VmSpec,
} from '../driver.js';
import { publishOp } from '../events.js';
import { fileDigest } from '../file-digest.js';
import { buildKernelCmdline } from '../kernel-args.js';
import { readManifest, type SnapshotManifest } from '../snapshot-manifest.js';
import { validateRestoreSpec, validateVmSpec } from '../vm-spec.js';
import { loadDeviceState } from './migration-channel.js';
import { buildPrivateRamHelper, privateRamEnv } from './private-ram-helper.js';
import { applyRamDiff, findRamMapping } from './process-memory.js';
import type { QemuIdentity, QemuLaunch, QemuMachine } from './qemu-args.js';
import { QemuInstance } from './qemu-instance.js';
import { placeBaseRam, prepareRunDir, runFiles } from './qemu-run-dir.js';
import type { RamLayout } from './qemu-snapshot.js';
import { QemuVm } from './qemu-vm.js';
import { checkRestorable, type ConfiguredKernel } from './restore-check.js';

const run = promisify(execFile);

/** Options of {@link QemuDriver}. */
export interface QemuDriverOptions {
  /** The QEMU binary. @default 'qemu-system-x86_64' */
  readonly binary?: string;
  /** Resolved virtualization mode. */
  readonly mode: VirtualizationMode;
  /** Host TSC frequency for TCG guests (see `kernel-args.ts`). */
  readonly cpuKhz?: number;
  /** QEMU's version string; probed from the binary when omitted. */
  readonly vmmVersion?: string;
  /**
   * Kill each QEMU when this process dies, so a crashed daemon leaves no
   * unmanaged VMs behind. @default true
   */
  readonly killWithParent?: boolean;
  /** Run QEMU as this user and group (see docs/vmm.md); omitted: as this process's user. */
  readonly user?: QemuIdentity;
  /** QEMU's own seccomp filter (`-sandbox`). @default true */
  readonly sandbox?: boolean;
  /** A virtio-balloon with free-page reporting in booted VMs (restores follow the snapshot). @default true */
  readonly balloon?: boolean;
  /** Where the private-RAM interposer is built and cached. @default `<tmpdir>/aenv-vmm-helpers` */
  readonly helperDir?: string;
  /**
   * A guest kernel (and initrd) every boot uses instead of the spec's;
   * restores refuse snapshots taken with another. `initrd` undefined keeps
   * the spec's initrd, null boots without one.
   */
  readonly guestKernel?: { readonly kernel: string; readonly initrd?: string | null };
}

/** Everything the qemu driver can do (all of {@link VmmCapability}). */
export const QEMU_CAPABILITIES: ReadonlySet<VmmCapability> = new Set<VmmCapability>([
  'pause',
  'snapshot',
  'restore',
  'cow-restore',
  'snapshot-after-restore',
  'snapshot-keep-paused',
  'nbd-drives',
  'qcow2-drives',
]);

/** The first line of `qemu-system-x86_64 --version`. */
export async function qemuVersion(binary: string): Promise<string> {
  try {
    const { stdout } = await run(binary, ['--version']);
    return stdout.split('\n')[0]?.trim() ?? '';
  } catch (err) {
    throw new AenvError('VMM_DRIVER_UNAVAILABLE', `cannot run ${binary} --version`, { cause: err });
  }
}

/** One QEMU start: the machine, its RAM, how it starts and extra environment. */
interface StartPlan {
  readonly machine: QemuMachine;
  readonly ram: RamLayout;
  /** Whether the instance removes `ram.path` when it ends. */
  readonly ownsRam: boolean;
  readonly start: QemuLaunch['start'];
  readonly env?: Record<string, string>;
}

/** See the module comment. */
export class QemuDriver implements VmmDriver {
  readonly kind = 'qemu' as const;
  readonly mode: VirtualizationMode;
  readonly capabilities = QEMU_CAPABILITIES;
  readonly binary: string;
  readonly cpuKhz: number | undefined;
  readonly #o: QemuDriverOptions;
  #version: Promise<string> | undefined;
  #helper: Promise<string> | undefined;
  #kernel: Promise<ConfiguredKernel | undefined> | undefined;

  constructor(options: QemuDriverOptions) {
    this.#o = options;
    this.mode = options.mode;
    this.binary = options.binary ?? 'qemu-system-x86_64';
    this.cpuKhz = options.cpuKhz;
    if (options.vmmVersion !== undefined) this.#version = Promise.resolve(options.vmmVersion);
  }

  /** The QEMU version string (probed once). */
  version(): Promise<string> {
    this.#version ??= qemuVersion(this.binary);
    return this.#version;
  }

  /** The private-RAM interposer, built on first use. */
  privateRamHelper(): Promise<string> {
    this.#helper ??= buildPrivateRamHelper(this.#o.helperDir ?? join(tmpdir(), 'aenv-vmm-helpers'));
    this.#helper.catch(() => (this.#helper = undefined));
    return this.#helper;
  }

  /** The configured guest kernel with its digests (hashed once). */
  configuredKernel(): Promise<ConfiguredKernel | undefined> {
    this.#kernel ??= digestKernel(this.#o.guestKernel);
    this.#kernel.catch(() => (this.#kernel = undefined));
    return this.#kernel;
  }

  async boot(spec: VmSpec, signal?: AbortSignal): Promise<Vm> {
    const started = performance.now();
    const source = { id: spec.id, driver: this.kind, pid: undefined };
    try {
      validateVmSpec(spec);
      const machine = await this.#bootMachine(spec);
      const files = runFiles(spec.runDir);
      await prepareRunDir(spec.runDir, this.#o.user);
      await rm(files.memory, { force: true });
      const ram: RamLayout = { kind: 'own', path: files.memory };
      const plan = { machine, ram, ownsRam: true, start: 'paused' as const };
      const [vm, instance] = await this.#start(spec, plan, signal);
      await this.#run(vm, instance, signal, 'VMM_START_FAILED', async (inst) => {
        await inst.qmp.execute('cont');
      });
      publishOp('boot', { ...source, pid: vm.pid }, started);
      return vm;
    } catch (err) {
      publishOp('boot', source, started, err);
      throw err;
    }
  }

  async restore(snapshot: SnapshotRef, spec: RestoreSpec, signal?: AbortSignal): Promise<Vm> {
    const started = performance.now();
    const source = { id: spec.id, driver: this.kind, pid: undefined };
    try {
      validateRestoreSpec(spec);
      const manifest = await readManifest(snapshot.dir);
      const guestKernel = await this.configuredKernel();
      await checkRestorable(manifest, snapshot.dir, spec, {
        mode: this.mode,
        vmmVersion: await this.version(),
        ...(guestKernel === undefined ? {} : { guestKernel }),
      });
      const helper = await this.privateRamHelper();
      await prepareRunDir(spec.runDir, this.#o.user);
      const { ram, owned } = await placeBaseRam(
        join(snapshot.dir, manifest.memory.file as string),
        spec.runDir,
        { baseId: manifest.memory.baseId as string, source: snapshot.dir },
        this.#o.user,
      );
      const machine = machineFromManifest(manifest, spec);
      const env = privateRamEnv(helper, ram.path);
      const plan = { machine, ram, ownsRam: owned, start: 'incoming' as const, env };
      const [vm, instance] = await this.#start(spec, plan, signal);
      await this.#run(vm, instance, signal, 'VMM_RESTORE_FAILED', async (inst) => {
        await loadSnapshotInto(inst, manifest, snapshot.dir, spec.runDir, ram.path);
        await inst.qmp.execute('cont');
      });
      publishOp('restore', { ...source, pid: vm.pid }, started, undefined, {
        'snapshot.dir': snapshot.dir,
      });
      return vm;
    } catch (err) {
      publishOp('restore', source, started, err);
      throw err;
    }
  }

  async #bootMachine(spec: VmSpec): Promise<QemuMachine> {
    const k = this.#o.guestKernel;
    const kernel = k?.kernel ?? spec.kernel;
    const initrd = k !== undefined && k.initrd !== undefined ? k.initrd : (spec.initrd ?? null);
    const [kernelDigest, initrdDigest] = await Promise.all([
      fileDigest(kernel),
      initrd === null ? null : fileDigest(initrd),
    ]).catch((err: unknown) => {
      throw new AenvError(
        'INVALID_ARGUMENT',
        `cannot read the boot files: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    });
    return {
      mode: this.mode,
      vcpus: spec.vcpus,
      memoryMiB: spec.memoryMiB,
      cpuModel: this.mode === 'kvm' ? 'host' : 'default',
      kernel,
      initrd,
      kernelDigest,
      initrdDigest,
      cmdline: buildKernelCmdline({
        mode: this.mode,
        ...(this.cpuKhz === undefined ? {} : { cpuKhz: this.cpuKhz }),
        ...(spec.guest === undefined ? {} : { guest: spec.guest }),
        ...(spec.cmdline === undefined ? {} : { extra: spec.cmdline }),
      }),
      drives: spec.drives,
      network: spec.network === undefined ? null : { tap: spec.network.tap, mac: spec.network.mac },
      balloon: this.#o.balloon ?? true,
    };
  }

  async #start(
    spec: ConsoleSpec & { id: string; runDir: string; network?: { netns?: string } },
    plan: StartPlan,
    signal: AbortSignal | undefined,
  ): Promise<[QemuVm, QemuInstance]> {
    const files = runFiles(spec.runDir);
    const serialLog = spec.serialLog ?? join(spec.runDir, 'serial.log');
    const instance = await QemuInstance.launch({
      binary: this.binary,
      launch: {
        id: spec.id,
        machine: plan.machine,
        memory: { path: plan.ram.path },
        qmpSocket: files.qmp,
        serialSocket: files.serial,
        pidFile: files.pid,
        start: plan.start,
        sandbox: this.#o.sandbox ?? true,
      },
      serialLog,
      killWithParent: this.#o.killWithParent ?? true,
      ownedFiles: plan.ownsRam ? [plan.ram.path] : [],
      ...(this.#o.user === undefined ? {} : { user: this.#o.user }),
      ...(plan.env === undefined ? {} : { env: plan.env }),
      ...(spec.network?.netns === undefined ? {} : { netns: spec.network.netns }),
      ...(spec.serialLogMaxBytes === undefined
        ? {}
        : { serialLogMaxBytes: spec.serialLogMaxBytes }),
      ...(signal === undefined ? {} : { signal }),
    });
    const vm = new QemuVm({
      id: spec.id,
      instance,
      machine: plan.machine,
      ram: plan.ram,
      runDir: spec.runDir,
      ...(this.#o.user === undefined ? {} : { qemuUser: this.#o.user }),
      vmmVersion: await this.version(),
      serialLog,
      initialState: 'starting',
    });
    return [vm, instance];
  }

  /** Runs the last start steps; on failure or abort the VM is killed and the error wrapped. */
  async #run(
    vm: QemuVm,
    instance: QemuInstance,
    signal: AbortSignal | undefined,
    code: 'VMM_START_FAILED' | 'VMM_RESTORE_FAILED',
    steps: (inst: QemuInstance) => Promise<void>,
  ): Promise<void> {
    try {
      signal?.throwIfAborted();
      await steps(instance);
      signal?.throwIfAborted();
      vm.markStarted();
    } catch (err) {
      await vm.stop({ graceMs: 0 });
      if (signal?.aborted === true) throw err;
      const died = instance.process.stderrTail().trim();
      throw new AenvError(
        code,
        `VM ${vm.id}: ${(err as Error).message}${died === '' ? '' : ` (QEMU: ${died})`}`,
        {
          cause: err,
          fields: { 'sandbox.id': vm.id },
        },
      );
    }
  }
}

function machineFromManifest(m: SnapshotManifest, spec: RestoreSpec): QemuMachine {
  return {
    mode: m.mode,
    vcpus: m.machine.vcpus,
    memoryMiB: m.machine.memoryMiB,
    cpuModel: m.machine.cpuModel,
    kernel: m.boot.kernel,
    initrd: m.boot.initrd,
    kernelDigest: m.boot.kernelDigest as string,
    initrdDigest: m.boot.initrdDigest ?? null,
    cmdline: m.boot.cmdline,
    drives: spec.drives,
    network: spec.network === undefined ? null : { tap: spec.network.tap, mac: spec.network.mac },
    balloon: m.vmm.balloon === true,
  };
}

/** Writes the snapshot's RAM diff into the new QEMU, then loads its device state. */
async function loadSnapshotInto(
  inst: QemuInstance,
  m: SnapshotManifest,
  dir: string,
  runDir: string,
  ramPath: string,
): Promise<void> {
  if (m.memory.diff !== undefined) {
    const ram = await findRamMapping(inst.process.pid as number, ramPath, m.memory.bytes);
    await applyRamDiff(ram, join(dir, m.memory.diff.file));
  }
  await loadDeviceState(inst.qmp, runDir, join(dir, m.state.file));
}

async function digestKernel(
  k: QemuDriverOptions['guestKernel'],
): Promise<ConfiguredKernel | undefined> {
  if (k === undefined) return undefined;
  const kernelDigest = await fileDigest(k.kernel);
  if (k.initrd === undefined) return { kernel: k.kernel, kernelDigest };
  const initrdDigest = k.initrd === null ? null : await fileDigest(k.initrd);
  return { kernel: k.kernel, kernelDigest, initrd: k.initrd, initrdDigest };
}
