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
 *   `qemu-snapshot.ts` and docs/snapshots.md. `prepareRestore` stops before
 *   the device state loads (`qemu-prepared-restore.ts`); `restore` is a
 *   prepare completed at once.
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
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import type {
  ConsoleSpec,
  PreparedRestore,
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
import { buildPrivateRamHelper, privateRamEnv } from './private-ram-helper.js';
import { applyRamDiff, findRamMapping } from './process-memory.js';
import type { QemuIdentity, QemuLaunch, QemuMachine } from './qemu-args.js';
import { QemuInstance } from './qemu-instance.js';
import { JAIL_TAP_FD, QemuJail, type QemuJailConfig } from './qemu-jail.js';
import { QemuPreparedRestore } from './qemu-prepared-restore.js';
import { placeBaseRam, prepareRunDir, runFiles } from './qemu-run-dir.js';
import type { RamLayout } from './qemu-snapshot.js';
import { QemuVm } from './qemu-vm.js';
import { checkRestorable, type ConfiguredKernel } from './restore-check.js';
import { finishStart, startFailure } from './start-steps.js';

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
  /**
   * Jail every QEMU (own uid, cgroup, mount namespace; see `qemu-jail.ts`).
   * Takes the place of `user`.
   */
  readonly jail?: QemuJailConfig;
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
  'prepared-restore',
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
  /** The jail QEMU runs in, if the driver jails. */
  readonly jail?: QemuJail | undefined;
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
      const jail = await this.#openJail(spec.id, machine);
      const ram: RamLayout = { kind: 'own', path: files.memory };
      const plan = { machine, ram, ownsRam: true, start: 'paused' as const, jail };
      const instance = await this.#guarded(jail, async () => {
        await prepareRunDir(spec.runDir, this.#fileUser(jail));
        await rm(files.memory, { force: true });
        return this.#launch(spec, plan, signal);
      });
      const serialLog = spec.serialLog ?? join(spec.runDir, 'serial.log');
      const paths = { runDir: spec.runDir, serialLog };
      const vm = this.#vm(spec.id, paths, plan, instance, await this.version());
      await finishStart(vm, instance, signal, 'VMM_START_FAILED', async (inst) => {
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
      const prepared = await this.#prepare(snapshot, spec, false, signal);
      const vm = await prepared.complete(signal === undefined ? {} : { signal });
      publishOp('restore', { ...source, pid: vm.pid }, started, undefined, {
        'snapshot.dir': snapshot.dir,
      });
      return vm;
    } catch (err) {
      publishOp('restore', source, started, err);
      throw err;
    }
  }

  async prepareRestore(
    snapshot: SnapshotRef,
    spec: RestoreSpec,
    signal?: AbortSignal,
  ): Promise<PreparedRestore> {
    const started = performance.now();
    const source = { id: spec.id, driver: this.kind, pid: undefined };
    try {
      const prepared = await this.#prepare(snapshot, spec, true, signal);
      publishOp('prepare', { ...source, pid: prepared.pid }, started, undefined, {
        'snapshot.dir': snapshot.dir,
      });
      return prepared;
    } catch (err) {
      publishOp('prepare', source, started, err);
      throw err;
    }
  }

  /**
   * A restore up to its last step: checks, the base RAM placed, QEMU started
   * with `-incoming defer`, the RAM diff written, the device state read.
   */
  async #prepare(
    snapshot: SnapshotRef,
    spec: RestoreSpec,
    publish: boolean,
    signal: AbortSignal | undefined,
  ): Promise<QemuPreparedRestore> {
    validateRestoreSpec(spec);
    const manifest = await readManifest(snapshot.dir);
    const guestKernel = await this.configuredKernel();
    await checkRestorable(manifest, snapshot.dir, spec, {
      mode: this.mode,
      vmmVersion: await this.version(),
      ...(guestKernel === undefined ? {} : { guestKernel }),
    });
    const helper = await this.privateRamHelper();
    const deviceState = await readFile(join(snapshot.dir, manifest.state.file));
    const machine = machineFromManifest(manifest, spec);
    const jail = await this.#openJail(spec.id, machine);
    const { plan, instance } = await this.#guarded(jail, async () => {
      await prepareRunDir(spec.runDir, this.#fileUser(jail));
      const { ram, owned } = await placeBaseRam(
        join(snapshot.dir, manifest.memory.file as string),
        spec.runDir,
        { baseId: manifest.memory.baseId as string, source: snapshot.dir },
        this.#fileUser(jail),
      );
      const env = privateRamEnv(helper, ram.path);
      const plan = { machine, ram, ownsRam: owned, start: 'incoming' as const, env, jail };
      return { plan, instance: await this.#launch(spec, plan, signal) };
    });
    try {
      signal?.throwIfAborted();
      const diff = manifest.memory.diff;
      if (diff !== undefined) {
        const mapping = await findRamMapping(
          instance.process.pid as number,
          plan.ram.path,
          manifest.memory.bytes,
        );
        await applyRamDiff(mapping, join(snapshot.dir, diff.file));
      }
      signal?.throwIfAborted();
    } catch (err) {
      await instance.quit(0);
      if (signal?.aborted === true) throw err;
      throw startFailure(spec.id, instance, 'VMM_RESTORE_FAILED', err);
    }
    const serialLog = spec.serialLog ?? join(spec.runDir, 'serial.log');
    const version = await this.version();
    return new QemuPreparedRestore({
      instance,
      spec,
      snapshot: { dir: snapshot.dir },
      deviceState,
      publish,
      makeVm: (id) => this.#vm(id, { runDir: spec.runDir, serialLog }, plan, instance, version),
    });
  }

  /** A jail for VM `id` when the driver jails QEMU. */
  async #openJail(id: string, machine: QemuMachine): Promise<QemuJail | undefined> {
    return this.#o.jail === undefined ? undefined : QemuJail.open(this.#o.jail, id, machine);
  }

  /**
   * Runs the steps up to a launched instance; when they fail the jail is
   * released (a launched instance releases it itself when QEMU ends).
   */
  async #guarded<T>(jail: QemuJail | undefined, steps: () => Promise<T>): Promise<T> {
    try {
      return await steps();
    } catch (err) {
      await jail?.release().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Who owns QEMU's files: a jailed QEMU's uid with the jail's common group
   * (so snapshot RAM sealed to that group maps in any other jailed VM), else
   * the configured user.
   */
  #fileUser(jail: QemuJail | undefined): QemuIdentity | undefined {
    if (jail === undefined || this.#o.jail === undefined) return this.#o.user;
    return { uid: jail.identity.uid, gid: this.#o.jail.pool.sharedGid };
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

  async #launch(
    spec: ConsoleSpec & { id: string; runDir: string; network?: { netns?: string } },
    plan: StartPlan,
    signal: AbortSignal | undefined,
  ): Promise<QemuInstance> {
    const launch = this.#launchOf(spec, plan);
    await plan.jail?.admit(launch, spec.runDir, plan.env);
    return QemuInstance.launch({
      binary: this.binary,
      launch,
      ...(plan.jail === undefined ? {} : { jail: plan.jail }),
      serialLog: spec.serialLog ?? join(spec.runDir, 'serial.log'),
      killWithParent: this.#o.killWithParent ?? true,
      ownedFiles: plan.ownsRam ? [plan.ram.path] : [],
      ...(this.#o.user === undefined || plan.jail !== undefined ? {} : { user: this.#o.user }),
      ...(plan.env === undefined ? {} : { env: plan.env }),
      ...(spec.network?.netns === undefined ? {} : { netns: spec.network.netns }),
      ...(spec.serialLogMaxBytes === undefined
        ? {}
        : { serialLogMaxBytes: spec.serialLogMaxBytes }),
      ...(signal === undefined ? {} : { signal }),
    });
  }

  #launchOf(spec: { id: string; runDir: string }, plan: StartPlan): QemuLaunch {
    const files = runFiles(spec.runDir);
    return {
      id: spec.id,
      machine: plan.machine,
      memory: { path: plan.ram.path },
      qmpSocket: files.qmp,
      serialSocket: files.serial,
      pidFile: files.pid,
      start: plan.start,
      sandbox: this.#o.sandbox ?? true,
      ...(plan.jail !== undefined && plan.machine.network !== null ? { tapFd: JAIL_TAP_FD } : {}),
      ...(plan.jail === undefined ? {} : { tcgCacheMiB: plan.jail.tcgCacheMiB }),
    };
  }

  #vm(
    id: string,
    paths: { readonly runDir: string; readonly serialLog: string },
    plan: StartPlan,
    instance: QemuInstance,
    vmmVersion: string,
  ): QemuVm {
    const fileUser = this.#fileUser(plan.jail);
    return new QemuVm({
      id,
      instance,
      machine: plan.machine,
      ram: plan.ram,
      runDir: paths.runDir,
      ...(fileUser === undefined ? {} : { qemuUser: fileUser }),
      vmmVersion,
      serialLog: paths.serialLog,
      initialState: 'starting',
    });
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

async function digestKernel(
  k: QemuDriverOptions['guestKernel'],
): Promise<ConfiguredKernel | undefined> {
  if (k === undefined) return undefined;
  const kernelDigest = await fileDigest(k.kernel);
  if (k.initrd === undefined) return { kernel: k.kernel, kernelDigest };
  const initrdDigest = k.initrd === null ? null : await fileDigest(k.initrd);
  return { kernel: k.kernel, kernelDigest, initrd: k.initrd, initrdDigest };
}
