/**
 * The firecracker driver: Firecracker microVMs on hosts with hardware KVM,
 * driven through Firecracker's REST API (v1.16) on a unix socket.
 *
 * - `boot`: a fresh Firecracker process (optionally under the jailer, in
 *   the sandbox's network namespace) gets, in order, logger and metrics,
 *   machine-config, boot-source, drives, the network interface, balloon
 *   (free page reporting), entropy device and vsock, then `InstanceStart`.
 * - `restore`: a fresh process gets logger and metrics, then
 *   `PUT /snapshot/load` with the snapshot's memory file as a `File`
 *   backend (Firecracker maps it `MAP_PRIVATE`: clones share its clean
 *   pages), the new tap as a network override, the new vsock socket as an
 *   override, and `resume_vm`.
 * - A snapshot is refused elsewhere than it came from: another driver,
 *   virtualization mode, Firecracker version, drive set, MAC, or drive-path
 *   scheme (see `vmm-layout.ts`).
 *
 * Drives are raw files or NBD exports (attached to `/dev/nbdN` through the
 * kernel's NBD client, see `nbd-attachment.ts`); qcow2 is refused with
 * `VMM_NOT_SUPPORTED`. Firecracker always runs KVM: there is no TCG mode.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import type {
  ConsoleSpec,
  PreparedRestore,
  RestoreSpec,
  SnapshotRef,
  Vm,
  VmmCapability,
  VmmDriver,
  VmSpec,
} from '../driver.js';
import { invalidSpec, notSupported } from '../errors.js';
import { publishOp } from '../events.js';
import { buildKernelCmdline } from '../kernel-args.js';
import { readManifest, type SnapshotManifest } from '../snapshot-manifest.js';
import { validateRestoreSpec, validateVmSpec } from '../vm-spec.js';
import type { Balloon, CpuTemplate } from './api-types.js';
import {
  FIRECRACKER_KERNEL_ARGS,
  bootPlan,
  restorePlan,
  type ApiStep,
  type FirecrackerMachine,
  type TelemetryPaths,
} from './firecracker-config.js';
import { FirecrackerInstance } from './firecracker-instance.js';
import { FC_SNAPSHOT_FILES, type FcVmRecord } from './firecracker-snapshot.js';
import { FirecrackerVm } from './firecracker-vm.js';
import { NbdAttacher } from './nbd-attachment.js';
import { checkFcRestorable } from './restore-check.js';
import { jailerForVm, type FirecrackerJailLimits } from './jailer-per-vm.js';
import { RUN_FILES, type JailerOptions, type VmmLayout } from './vmm-layout.js';
import type { JailUidPool } from '../jail/jail-uid-pool.js';
import { prepareVmm, type FileToExpose, type PreparedVmm } from './vmm-resources.js';

const run = promisify(execFile);

/** Options of {@link FirecrackerDriver}. */
export interface FirecrackerDriverOptions {
  /** The `firecracker` binary (v1.16). @default 'firecracker' */
  readonly binary?: string;
  /** Its version string; probed with `--version` when omitted. */
  readonly vmmVersion?: string;
  /** Run every VMM under the jailer. */
  readonly jailer?: JailerOptions;
  /**
   * With `jailer`: give each VMM its own uid/gid from this pool (instead of
   * `jailer.uid`), held until it has exited.
   */
  readonly jailUids?: JailUidPool;
  /** With `jailer`: per-VM `--cgroup` limits (see `jailer-per-vm.ts`). */
  readonly jailLimits?: FirecrackerJailLimits;
  /** Firecracker's `snapshot-editor`, needed to merge diff snapshots onto their base. */
  readonly snapshotEditor?: string;
  /** How NBD drives are attached (its `nbd-client` program, sysfs root). @default `new NbdAttacher()` */
  readonly nbd?: NbdAttacher;
  /** Whether this host can attach NBD exports (see {@link FirecrackerDriver.create}). @default false */
  readonly nbdUsable?: boolean;
  /** Kill each VMM when this process dies (not effective under the jailer). @default true */
  readonly killWithParent?: boolean;
  /** KVM dirty-page tracking, needed for `Diff` snapshots (costs guest write speed). @default false */
  readonly trackDirtyPages?: boolean;
  /** Static CPU template. @default 'None' */
  readonly cpuTemplate?: CpuTemplate;
  /** Simultaneous multithreading in the guest. @default false */
  readonly smt?: boolean;
  /** Back guest memory with 2 MiB huge pages. @default 'None' */
  readonly hugePages?: 'None' | '2M';
  /** Balloon device; `false` for none. @default `{ amount_mib: 0, deflate_on_oom: true, free_page_reporting: true }` */
  readonly balloon?: Balloon | false;
  /** virtio-rng entropy device. @default true */
  readonly entropy?: boolean;
  /** vsock device with this guest CID (≥ 3); the socket is `vsock.sock` in the run directory (or jail). */
  readonly vsockCid?: number;
  /** Block I/O engine and cache mode of every drive. @default Sync, Unsafe */
  readonly ioEngine?: 'Sync' | 'Async';
  readonly cacheType?: 'Unsafe' | 'Writeback';
  /**
   * On restore, advance the guest's kvmclock by the wall time since the
   * snapshot (`clock_realtime`, x86); otherwise the guest clock resumes
   * where it stopped and the guest agent must reset it. @default false
   */
  readonly clockRealtime?: boolean;
  /** Firecracker's log level. @default 'Warning' */
  readonly logLevel?: TelemetryPaths['logLevel'];
  /** Timeout of each API request. @default 10 000 */
  readonly apiTimeoutMs?: number;
}

/** What every firecracker driver can do; `nbd-drives` is added where the host can attach NBD. */
export const FIRECRACKER_CAPABILITIES: readonly VmmCapability[] = [
  'pause',
  'snapshot',
  'restore',
  'cow-restore',
  'snapshot-after-restore',
  'snapshot-keep-paused',
];

/** Firecracker's vCPU limit. */
const MAX_VCPUS = 32;

/** The first line of `firecracker --version`, e.g. `Firecracker v1.16.1`. */
export async function firecrackerVersion(binary: string): Promise<string> {
  try {
    const { stdout } = await run(binary, ['--version'], { timeout: 10_000 });
    return stdout.split('\n')[0]?.trim() ?? '';
  } catch (err) {
    throw new AenvError('VMM_DRIVER_UNAVAILABLE', `cannot run ${binary} --version`, { cause: err });
  }
}

/** See the module comment. */
export class FirecrackerDriver implements VmmDriver {
  readonly kind = 'firecracker' as const;
  readonly mode = 'kvm' as const;
  readonly capabilities: ReadonlySet<VmmCapability>;
  readonly binary: string;
  readonly #o: FirecrackerDriverOptions;
  readonly #nbd: NbdAttacher;
  #version: Promise<string> | undefined;

  constructor(options: FirecrackerDriverOptions = {}) {
    this.#o = options;
    this.binary = options.binary ?? 'firecracker';
    this.#nbd = options.nbd ?? new NbdAttacher();
    const caps: VmmCapability[] = [...FIRECRACKER_CAPABILITIES];
    if (options.nbdUsable === true) caps.push('nbd-drives');
    this.capabilities = new Set(caps);
    if (options.vmmVersion !== undefined) this.#version = Promise.resolve(options.vmmVersion);
  }

  /** Probes the binary's version and the host's NBD support, then constructs the driver. */
  static async create(options: FirecrackerDriverOptions = {}): Promise<FirecrackerDriver> {
    const nbd = options.nbd ?? new NbdAttacher();
    const vmmVersion =
      options.vmmVersion ?? (await firecrackerVersion(options.binary ?? 'firecracker'));
    const nbdUsable = options.nbdUsable ?? (await nbd.probe()).usable;
    return new FirecrackerDriver({ ...options, nbd, vmmVersion, nbdUsable });
  }

  /** Firecracker's version string (probed once). */
  version(): Promise<string> {
    this.#version ??= firecrackerVersion(this.binary);
    return this.#version;
  }

  async boot(spec: VmSpec, signal?: AbortSignal): Promise<Vm> {
    const started = performance.now();
    const source = { id: spec.id, driver: this.kind, pid: undefined };
    try {
      validateVmSpec(spec, this.#longestSocket());
      if (spec.vcpus > MAX_VCPUS)
        throw invalidSpec('vcpus', `must be at most ${MAX_VCPUS} for Firecracker`);
      const vm = await this.#boot(spec, signal);
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
      validateRestoreSpec(spec, this.#longestSocket());
      const vm = await this.#restore(snapshot.dir, spec, signal);
      publishOp('restore', { ...source, pid: vm.pid }, started, undefined, {
        'snapshot.dir': snapshot.dir,
      });
      return vm;
    } catch (err) {
      publishOp('restore', source, started, err);
      throw err;
    }
  }

  /**
   * Not supported: `PUT /snapshot/load` maps the memory and restores the
   * devices in one call, so a Firecracker waiting before it would save only
   * its process start and API socket (see docs/firecracker.md).
   */
  prepareRestore(): Promise<PreparedRestore> {
    return Promise.reject(
      notSupported(
        this.kind,
        'prepareRestore',
        'snapshot/load maps memory and loads devices in one API call',
      ),
    );
  }

  /** The longest unix socket name the VMM creates in a run directory. */
  #longestSocket(): string {
    // guest-initiated vsock connections use `<uds_path>_<port>`
    return this.#o.vsockCid === undefined ? RUN_FILES.api : `${RUN_FILES.vsock}_4294967295`;
  }

  async #boot(spec: VmSpec, signal: AbortSignal | undefined): Promise<FirecrackerVm> {
    return this.#jailed(spec, (jailer) => this.#bootIn(spec, jailer, signal));
  }

  async #bootIn(
    spec: VmSpec,
    jailer: JailerOptions | undefined,
    signal: AbortSignal | undefined,
  ): Promise<FirecrackerVm> {
    const version = await this.version();
    await mkdir(spec.runDir, { recursive: true });
    const files: FileToExpose[] = [
      { host: spec.kernel, jailPath: '/boot/vmlinux', writable: false },
    ];
    if (spec.initrd !== undefined)
      files.push({ host: spec.initrd, jailPath: '/boot/initrd', writable: false });
    const cmdline = buildKernelCmdline({
      mode: 'kvm',
      ...(spec.guest === undefined ? {} : { guest: spec.guest }),
      extra: [...FIRECRACKER_KERNEL_ARGS, ...(spec.cmdline ?? [])],
    });
    const prepared = await this.#prepare(spec, files, jailer);
    const machine = this.#machine(spec, prepared, cmdline);
    const record: FcVmRecord = {
      vcpus: spec.vcpus,
      memoryMiB: spec.memoryMiB,
      cpuModel: machine.cpuTemplate === 'None' ? 'host' : machine.cpuTemplate,
      kernel: spec.kernel,
      initrd: spec.initrd ?? null,
      cmdline,
      drives: spec.drives.map((d) => ({ id: d.id, readOnly: d.readOnly })),
      mac: spec.network?.mac.toLowerCase() ?? null,
      vsockCid: this.#o.vsockCid ?? 0,
      balloon: machine.balloon !== null,
      entropy: machine.entropy !== null,
    };
    const [vm, instance] = await this.#launch(
      spec,
      prepared,
      { record, version, base: null, jailer },
      signal,
    );
    const steps = bootPlan(machine, this.#telemetryPaths(prepared.layout));
    await this.#run(vm, instance, steps, signal, 'VMM_START_FAILED');
    return vm;
  }

  async #restore(
    dir: string,
    spec: RestoreSpec,
    signal: AbortSignal | undefined,
  ): Promise<FirecrackerVm> {
    const version = await this.version();
    const manifest = await readManifest(dir);
    await checkFcRestorable(manifest, dir, spec, {
      vmmVersion: version,
      drivePaths: this.#o.jailer === undefined ? 'fd' : 'jail',
    });
    return this.#jailed(manifest.machine, async (jailer) => {
      await mkdir(spec.runDir, { recursive: true });
      return this.#restoreIn(dir, manifest, spec, { version, jailer }, signal);
    });
  }

  async #restoreIn(
    dir: string,
    manifest: SnapshotManifest,
    spec: RestoreSpec,
    facts: { version: string; jailer: JailerOptions | undefined },
    signal: AbortSignal | undefined,
  ): Promise<FirecrackerVm> {
    const { version, jailer } = facts;
    const memory = join(dir, manifest.memory.file ?? FC_SNAPSHOT_FILES.memory);
    const prepared = await this.#prepare(
      spec,
      [
        { host: join(dir, manifest.state.file), jailPath: '/snapshot-in/vmstate', writable: false },
        { host: memory, jailPath: '/snapshot-in/memory', writable: false },
      ],
      jailer,
    );
    const [statePath, memoryPath] = prepared.files as [string, string];
    const record = recordOf(manifest);
    const [vm, instance] = await this.#launch(
      spec,
      prepared,
      { record, version, base: memory, jailer },
      signal,
    );
    const steps = restorePlan(
      {
        statePath,
        memoryPath,
        trackDirtyPages: this.#o.trackDirtyPages ?? false,
        tap: spec.network?.tap ?? null,
        vsockPath: manifest.vmm.vsockCid === 0 ? null : prepared.layout.vsock.vmm,
        resume: true,
        clockRealtime: this.#o.clockRealtime ?? false,
      },
      this.#telemetryPaths(prepared.layout),
    );
    await this.#run(vm, instance, steps, signal, 'VMM_RESTORE_FAILED');
    return vm;
  }

  /**
   * Runs `start` with the VM's jailer options: its own uid from the pool
   * (when configured), given back once the VMM has exited, or at once when
   * the start fails.
   */
  async #jailed(
    machine: { readonly vcpus: number; readonly memoryMiB: number },
    start: (jailer: JailerOptions | undefined) => Promise<FirecrackerVm>,
  ): Promise<FirecrackerVm> {
    const { jailer, jailUids } = this.#o;
    if (jailer === undefined || jailUids === undefined) return start(jailer);
    const identity = jailUids.acquire();
    let released = false;
    const release = (): void => {
      if (!released) jailUids.release(identity);
      released = true;
    };
    try {
      const vm = await start(jailerForVm(jailer, identity, machine, this.#o.jailLimits));
      void vm.wait().finally(release);
      return vm;
    } catch (err) {
      release();
      throw err;
    }
  }

  #prepare(
    spec: VmSpec | RestoreSpec,
    files: FileToExpose[],
    jailer: JailerOptions | undefined,
  ): Promise<PreparedVmm> {
    return prepareVmm({
      id: spec.id,
      runDir: spec.runDir,
      firecracker: this.binary,
      jailer,
      drives: spec.drives,
      driveDefaults: {
        ioEngine: this.#o.ioEngine ?? 'Sync',
        cacheType: this.#o.cacheType ?? 'Unsafe',
      },
      files,
      nbd: this.#nbd,
    });
  }

  #machine(spec: VmSpec, p: PreparedVmm, cmdline: string): FirecrackerMachine {
    const balloon = this.#o.balloon ?? {
      amount_mib: 0,
      deflate_on_oom: true,
      free_page_reporting: true,
    };
    const cid = this.#o.vsockCid;
    return {
      vcpus: spec.vcpus,
      memoryMiB: spec.memoryMiB,
      smt: this.#o.smt ?? false,
      cpuTemplate: this.#o.cpuTemplate ?? 'None',
      hugePages: this.#o.hugePages ?? 'None',
      trackDirtyPages: this.#o.trackDirtyPages ?? false,
      kernel: p.files[0] as string,
      initrd: spec.initrd === undefined ? null : (p.files[1] as string),
      cmdline,
      drives: p.drives,
      network: spec.network === undefined ? null : { tap: spec.network.tap, mac: spec.network.mac },
      balloon: balloon === false ? null : balloon,
      entropy: this.#o.entropy === false ? null : {},
      vsock: cid === undefined ? null : { guestCid: cid, udsPath: p.layout.vsock.vmm },
    };
  }

  #telemetryPaths(layout: VmmLayout): TelemetryPaths {
    return {
      logPath: layout.logFifo.vmm,
      metricsPath: layout.metricsFifo.vmm,
      logLevel: this.#o.logLevel ?? 'Warning',
    };
  }

  async #launch(
    spec: (VmSpec | RestoreSpec) & ConsoleSpec,
    p: PreparedVmm,
    facts: {
      record: FcVmRecord;
      version: string;
      base: string | null;
      jailer: JailerOptions | undefined;
    },
    signal: AbortSignal | undefined,
  ): Promise<[FirecrackerVm, FirecrackerInstance]> {
    const serialLog = spec.serialLog ?? join(spec.runDir, 'serial.log');
    const instance = await FirecrackerInstance.launch({
      command: {
        firecracker: this.binary,
        id: spec.id,
        layout: p.layout,
        killWithParent: this.#o.killWithParent ?? true,
        ...(spec.network?.netns === undefined ? {} : { netns: spec.network.netns }),
        ...(facts.jailer === undefined ? {} : { jailer: facts.jailer }),
      },
      fds: p.fds,
      telemetry: p.telemetry,
      serialLog,
      resources: p.resources,
      ...(spec.serialLogMaxBytes === undefined
        ? {}
        : { serialLogMaxBytes: spec.serialLogMaxBytes }),
      ...(this.#o.apiTimeoutMs === undefined ? {} : { apiTimeoutMs: this.#o.apiTimeoutMs }),
      ...(signal === undefined ? {} : { signal }),
    });
    const vm = new FirecrackerVm({
      id: spec.id,
      instance,
      record: facts.record,
      vmmVersion: facts.version,
      serialLog,
      drivePaths: p.layout.kind === 'jail' ? 'jail' : 'fd',
      jail: p.layout.jail,
      trackDirtyPages: this.#o.trackDirtyPages ?? false,
      snapshotEditor: this.#o.snapshotEditor,
      base: facts.base,
      vsockPath: facts.record.vsockCid === 0 ? null : p.layout.vsock.host,
    });
    return [vm, instance];
  }

  /** Sends the API steps; on failure or abort the VM is killed and the error wrapped. */
  async #run(
    vm: FirecrackerVm,
    instance: FirecrackerInstance,
    steps: readonly ApiStep[],
    signal: AbortSignal | undefined,
    code: 'VMM_START_FAILED' | 'VMM_RESTORE_FAILED',
  ): Promise<void> {
    try {
      for (const step of steps) {
        signal?.throwIfAborted();
        // loading maps memory lazily; a generous floor covers a slow host
        const timeout = step.op === 'loadSnapshot' ? 60_000 : undefined;
        const path = step.path === undefined ? {} : { path: step.path };
        await instance.api.call(step.op, { ...path, body: step.body }, timeout);
      }
      signal?.throwIfAborted();
      vm.markStarted();
    } catch (err) {
      await vm.stop({ graceMs: 0 });
      if (signal?.aborted === true) throw err;
      const detail = [instance.process.stderrTail().trim(), instance.telemetry.logTail().trim()]
        .filter((s) => s !== '')
        .join(' | ');
      throw new AenvError(
        code,
        `VM ${vm.id}: ${(err as Error).message}${detail === '' ? '' : ` (firecracker: ${detail.slice(-2000)})`}`,
        { cause: err, fields: { 'sandbox.id': vm.id } },
      );
    }
  }
}

/** A restored VM's record: what its snapshot recorded. */
function recordOf(m: SnapshotManifest): FcVmRecord {
  const cid = m.vmm.vsockCid;
  return {
    vcpus: m.machine.vcpus,
    memoryMiB: m.machine.memoryMiB,
    cpuModel: m.machine.cpuModel,
    kernel: m.boot.kernel,
    initrd: m.boot.initrd,
    cmdline: m.boot.cmdline,
    drives: m.drives,
    mac: m.network?.mac ?? null,
    vsockCid: typeof cid === 'number' ? cid : 0,
    balloon: m.vmm.balloon === true,
    entropy: m.vmm.entropy === true,
  };
}
