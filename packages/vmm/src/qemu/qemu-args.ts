/**
 * The QEMU command line, built from plain data: pure, tested beside.
 *
 * Boot and restore build the same device list from the same
 * {@link QemuMachine}: a restore must present exactly the devices, in the
 * same order, that the snapshot was taken with (virtio-mmio slots are
 * assigned in command-line order). Only paths, the tap name and how the run
 * starts (`-S` for boot, `-incoming defer` for restore) differ.
 *
 * Choices (runtime-lab §A, §C):
 * - `-M microvm` with ACPI (the Debian kernel finds virtio-mmio devices only
 *   through ACPI) and guest RAM in a `memory-backend-file`, so a snapshot's
 *   memory is a file (`share=on` while booted, `share=off` = copy-on-write
 *   when restored);
 * - `-nodefaults`, no display, `-no-reboot` (a guest reboot ends QEMU);
 * - the serial console and QMP on unix sockets in the run directory;
 * - drive ids double as virtio-blk serials, which the guest init matches.
 *
 * @module
 */
import type { DriveSpec, VirtualizationMode } from '../driver.js';

/** Everything about a VM that a snapshot must preserve. */
export interface QemuMachine {
  readonly mode: VirtualizationMode;
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** `default` (QEMU's default model) or a `-cpu` value such as `host`. */
  readonly cpuModel: string;
  readonly kernel: string;
  readonly initrd: string | null;
  readonly cmdline: string;
  readonly drives: readonly DriveSpec[];
  /** The tap device and MAC, or null for no network device. */
  readonly network: { readonly tap: string; readonly mac: string } | null;
}

/** One QEMU launch. */
export interface QemuLaunch {
  /** VM id, for the process name. */
  readonly id: string;
  readonly machine: QemuMachine;
  /** Guest RAM file and whether it is mapped shared (booted) or private (restored). */
  readonly memory: { readonly path: string; readonly share: boolean };
  readonly qmpSocket: string;
  readonly serialSocket: string;
  readonly pidFile: string;
  /** `paused`: `-S`, continued over QMP once the console is attached; `incoming`: `-incoming defer`. */
  readonly start: 'paused' | 'incoming';
}

/** Escapes a value for QEMU's `key=value,...` option syntax (a comma is doubled). */
export function qemuOptValue(value: string): string {
  return value.replaceAll(',', ',,');
}

function driveArgs(drive: DriveSpec): string[] {
  const id = `drive-${drive.id}`;
  const common = `if=none,id=${id}${drive.readOnly ? ',readonly=on' : ',discard=unmap'}`;
  const src = drive.source;
  const backend =
    src.kind === 'file'
      ? `file=${qemuOptValue(src.path)},format=${src.format},${common}`
      : `driver=nbd,server.type=unix,server.path=${qemuOptValue(src.socket)},export=${qemuOptValue(src.export)},${common}`;
  return ['-drive', backend, '-device', `virtio-blk-device,drive=${id},serial=${drive.id}`];
}

/** The argument vector (without the program) for one launch. */
export function buildQemuArgs(launch: QemuLaunch): string[] {
  const m = launch.machine;
  const size = `${m.memoryMiB}M`;
  const mem = `memory-backend-file,id=mem,size=${size},mem-path=${qemuOptValue(launch.memory.path)},share=${launch.memory.share ? 'on' : 'off'}`;
  const args = [
    '-name',
    `aenv-${launch.id}`,
    '-nodefaults',
    '-no-user-config',
    '-display',
    'none',
    '-no-reboot',
    '-M',
    'microvm,acpi=on,memory-backend=mem',
    '-accel',
    m.mode,
  ];
  if (m.cpuModel !== 'default') args.push('-cpu', m.cpuModel);
  args.push('-smp', String(m.vcpus), '-m', size, '-object', mem);
  args.push('-kernel', m.kernel, '-append', m.cmdline);
  if (m.initrd !== null) args.push('-initrd', m.initrd);
  for (const d of m.drives) args.push(...driveArgs(d));
  if (m.network !== null) {
    args.push(
      '-netdev',
      `tap,id=net0,ifname=${qemuOptValue(m.network.tap)},script=no,downscript=no`,
      '-device',
      `virtio-net-device,netdev=net0,mac=${m.network.mac}`,
    );
  }
  args.push('-device', 'virtio-rng-device');
  args.push(
    '-chardev',
    `socket,id=con0,path=${qemuOptValue(launch.serialSocket)},server=on,wait=off`,
    '-serial',
    'chardev:con0',
    '-chardev',
    `socket,id=qmp0,path=${qemuOptValue(launch.qmpSocket)},server=on,wait=off`,
    '-mon',
    'chardev=qmp0,mode=control',
    '-pidfile',
    launch.pidFile,
  );
  if (launch.start === 'paused') args.push('-S');
  else args.push('-incoming', 'defer');
  return args;
}

/** How {@link qemuCommand} wraps QEMU. */
export interface QemuCommandOptions {
  /** Network namespace: a name under /run/netns or an absolute path. */
  readonly netns?: string;
  /**
   * Kill QEMU when the process that spawned it dies (`setpriv
   * --pdeathsig`), so a crashed daemon leaves no VMs running unmanaged.
   */
  readonly killWithParent?: boolean;
}

/**
 * The program and arguments that run QEMU. The wrappers (`setpriv`,
 * `nsenter`) exec rather than fork, so the child's pid is QEMU's.
 */
export function qemuCommand(
  binary: string,
  args: readonly string[],
  options: QemuCommandOptions = {},
): [string, string[]] {
  let argv = [binary, ...args];
  if (options.netns !== undefined) {
    const path = options.netns.startsWith('/') ? options.netns : `/run/netns/${options.netns}`;
    argv = ['nsenter', `--net=${path}`, '--', ...argv];
  }
  if (options.killWithParent === true) argv = ['setpriv', '--pdeathsig', 'SIGKILL', '--', ...argv];
  return [argv[0] as string, argv.slice(1)];
}
