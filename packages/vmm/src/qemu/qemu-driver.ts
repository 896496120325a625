/**
 * The qemu driver: `qemu-system-x86_64 -M microvm`, KVM where the host has
 * hardware KVM, TCG (software emulation) elsewhere.
 *
 * - `boot`: QEMU starts paused (`-S`), QMP and the serial console attach,
 *   then `cont`; RAM is a shared memory file in the run directory.
 * - `restore`: QEMU starts with `-incoming defer` and the snapshot's machine
 *   shape and boot files; RAM maps the snapshot's memory file private
 *   (copy-on-write) and the device state loads from its stream; then `cont`.
 *   See `qemu-snapshot.ts` for the memory modes.
 * - A snapshot is refused elsewhere than it came from: another driver,
 *   virtualization mode, QEMU version, drive set or MAC.
 *
 * Run-directory files (one run directory per VM): `qmp.sock`,
 * `serial.sock`, `qemu.pid` and, for a VM with its own RAM file, `memory`;
 * all are removed when the VM ends. The serial log (default
 * `<runDir>/serial.log`) stays.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
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
import { buildKernelCmdline } from '../kernel-args.js';
import { readManifest, type SnapshotManifest } from '../snapshot-manifest.js';
import { validateRestoreSpec, validateVmSpec } from '../vm-spec.js';
import type { QemuLaunch, QemuMachine } from './qemu-args.js';
import { QemuInstance } from './qemu-instance.js';
import { loadSnapshotState } from './qemu-snapshot.js';
import { QemuVm } from './qemu-vm.js';
import { checkRestorable } from './restore-check.js';

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

function runFiles(runDir: string): { qmp: string; serial: string; pid: string; memory: string } {
  return {
    qmp: join(runDir, 'qmp.sock'),
    serial: join(runDir, 'serial.sock'),
    pid: join(runDir, 'qemu.pid'),
    memory: join(runDir, 'memory'),
  };
}

/** See the module comment. */
export class QemuDriver implements VmmDriver {
  readonly kind = 'qemu' as const;
  readonly mode: VirtualizationMode;
  readonly capabilities = QEMU_CAPABILITIES;
  readonly binary: string;
  readonly cpuKhz: number | undefined;
  readonly #killWithParent: boolean;
  #version: Promise<string> | undefined;

  constructor(options: QemuDriverOptions) {
    this.mode = options.mode;
    this.#killWithParent = options.killWithParent ?? true;
    this.binary = options.binary ?? 'qemu-system-x86_64';
    this.cpuKhz = options.cpuKhz;
    if (options.vmmVersion !== undefined) this.#version = Promise.resolve(options.vmmVersion);
  }

  /** The QEMU version string (probed once). */
  version(): Promise<string> {
    this.#version ??= qemuVersion(this.binary);
    return this.#version;
  }

  async boot(spec: VmSpec, signal?: AbortSignal): Promise<Vm> {
    const started = performance.now();
    const source = { id: spec.id, driver: this.kind, pid: undefined };
    try {
      validateVmSpec(spec);
      const machine: QemuMachine = {
        mode: this.mode,
        vcpus: spec.vcpus,
        memoryMiB: spec.memoryMiB,
        cpuModel: this.mode === 'kvm' ? 'host' : 'default',
        kernel: spec.kernel,
        initrd: spec.initrd ?? null,
        cmdline: buildKernelCmdline({
          mode: this.mode,
          ...(this.cpuKhz === undefined ? {} : { cpuKhz: this.cpuKhz }),
          ...(spec.guest === undefined ? {} : { guest: spec.guest }),
          ...(spec.cmdline === undefined ? {} : { extra: spec.cmdline }),
        }),
        drives: spec.drives,
        network:
          spec.network === undefined ? null : { tap: spec.network.tap, mac: spec.network.mac },
      };
      const files = runFiles(spec.runDir);
      await mkdir(spec.runDir, { recursive: true });
      await rm(files.memory, { force: true });
      const [vm, instance] = await this.#start(
        spec,
        machine,
        { path: files.memory, share: true },
        'paused',
        signal,
      );
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
      await checkRestorable(manifest, snapshot.dir, spec, {
        mode: this.mode,
        vmmVersion: await this.version(),
      });
      const machine = machineFromManifest(manifest, spec);
      const files = runFiles(spec.runDir);
      await mkdir(spec.runDir, { recursive: true });
      const inline = manifest.memory.file === null;
      if (inline) await rm(files.memory, { force: true });
      const memory = inline
        ? { path: files.memory, share: true }
        : { path: join(snapshot.dir, manifest.memory.file), share: false };
      const [vm, instance] = await this.#start(spec, machine, memory, 'incoming', signal);
      await this.#run(vm, instance, signal, 'VMM_RESTORE_FAILED', async (inst) => {
        await loadSnapshotState(inst.qmp, manifest, snapshot.dir);
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

  async #start(
    spec: ConsoleSpec & { id: string; runDir: string; network?: { netns?: string } },
    machine: QemuMachine,
    memory: { path: string; share: boolean },
    start: QemuLaunch['start'],
    signal: AbortSignal | undefined,
  ): Promise<[QemuVm, QemuInstance]> {
    const files = runFiles(spec.runDir);
    const serialLog = spec.serialLog ?? join(spec.runDir, 'serial.log');
    const instance = await QemuInstance.launch({
      binary: this.binary,
      launch: {
        id: spec.id,
        machine,
        memory,
        qmpSocket: files.qmp,
        serialSocket: files.serial,
        pidFile: files.pid,
        start,
      },
      serialLog,
      killWithParent: this.#killWithParent,
      ownedFiles: memory.share ? [memory.path] : [],
      ...(spec.network?.netns === undefined ? {} : { netns: spec.network.netns }),
      ...(spec.serialLogMaxBytes === undefined
        ? {}
        : { serialLogMaxBytes: spec.serialLogMaxBytes }),
      ...(signal === undefined ? {} : { signal }),
    });
    const vm = new QemuVm({
      id: spec.id,
      instance,
      machine,
      memory,
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
    cmdline: m.boot.cmdline,
    drives: spec.drives,
    network: spec.network === undefined ? null : { tap: spec.network.tap, mac: spec.network.mac },
  };
}
