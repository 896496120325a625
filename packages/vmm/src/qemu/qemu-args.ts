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
 * - drive ids double as virtio-blk serials, which the guest init matches;
 * - a virtio-balloon with free-page reporting (when the machine has one):
 *   pages the guest frees go back to the host;
 * - QEMU's own seccomp filter (`-sandbox`), denying obsolete syscalls,
 *   privilege changes, spawning processes and resource control;
 * - as another user, QEMU runs through `setpriv` with no capabilities, no
 *   supplementary groups and no way to regain privileges.
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
  /** `sha256:` digests of the boot files, recorded in snapshots. */
  readonly kernelDigest: string;
  readonly initrdDigest: string | null;
  readonly drives: readonly DriveSpec[];
  /** The tap device and MAC, or null for no network device. */
  readonly network: { readonly tap: string; readonly mac: string } | null;
  /** Whether the machine has a virtio-balloon with free-page reporting. */
  readonly balloon: boolean;
}

/** One QEMU launch. */
export interface QemuLaunch {
  /** VM id, for the process name. */
  readonly id: string;
  readonly machine: QemuMachine;
  /**
   * Guest RAM file, always `share=on` for QEMU (so migrations leave RAM
   * out); a restored VM's base file is made private by the interposer.
   */
  readonly memory: { readonly path: string };
  readonly qmpSocket: string;
  readonly serialSocket: string;
  readonly pidFile: string;
  /** `paused`: `-S`, continued over QMP once the console is attached; `incoming`: `-incoming defer`. */
  readonly start: 'paused' | 'incoming';
  /** Whether QEMU runs under its seccomp filter. */
  readonly sandbox: boolean;
  /** The tap is already open on this descriptor (a jailed QEMU cannot open /dev/net/tun). */
  readonly tapFd?: number;
  /**
   * TCG's translated-code cache size in MiB (`tb-size`); QEMU's default is
   * 1 GiB, more than a jailed QEMU's memory limit leaves it.
   */
  readonly tcgCacheMiB?: number;
}

/** QEMU's seccomp filter: everything it can deny without breaking TCG, tap, NBD and file RAM. */
export const QEMU_SANDBOX =
  'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny';

/** Escapes a value for QEMU's `key=value,...` option syntax (a comma is doubled). */
export function qemuOptValue(value: string): string {
  return value.replaceAll(',', ',,');
}

function driveArgs(drive: DriveSpec): string[] {
  const id = `drive-${drive.id}`;
  // werror=report: a write the backing store cannot take (a full host disk:
  // NBD_ENOSPC) is an I/O error in the guest; QEMU's default (enospc) would
  // silently pause the whole VM until someone resumes it.
  const rw = ',discard=unmap,werror=report';
  const common = `if=none,id=${id}${drive.readOnly ? ',readonly=on' : rw}`;
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
  const mem = `memory-backend-file,id=mem,size=${size},mem-path=${qemuOptValue(launch.memory.path)},share=on`;
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
    m.mode === 'tcg' && launch.tcgCacheMiB !== undefined
      ? `tcg,tb-size=${launch.tcgCacheMiB}`
      : m.mode,
  ];
  if (m.cpuModel !== 'default') args.push('-cpu', m.cpuModel);
  args.push('-smp', String(m.vcpus), '-m', size, '-object', mem);
  args.push('-kernel', m.kernel, '-append', m.cmdline);
  if (m.initrd !== null) args.push('-initrd', m.initrd);
  for (const d of m.drives) args.push(...driveArgs(d));
  if (m.network !== null) {
    args.push(
      '-netdev',
      launch.tapFd === undefined
        ? `tap,id=net0,ifname=${qemuOptValue(m.network.tap)},script=no,downscript=no`
        : `tap,id=net0,fd=${launch.tapFd}`,
      '-device',
      `virtio-net-device,netdev=net0,mac=${m.network.mac}`,
    );
  }
  args.push('-device', 'virtio-rng-device');
  if (m.balloon) args.push('-device', 'virtio-balloon-device,free-page-reporting=on');
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
  if (launch.sandbox) args.push('-sandbox', QEMU_SANDBOX);
  if (launch.start === 'paused') args.push('-S');
  else args.push('-incoming', 'defer');
  return args;
}

/** The user and group an unprivileged QEMU runs as. */
export interface QemuIdentity {
  readonly uid: number;
  readonly gid: number;
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
  /** Run QEMU as this user and group (no capabilities, no supplementary groups). */
  readonly user?: QemuIdentity;
}

/**
 * The program and arguments that run QEMU. The wrappers (`setpriv`,
 * `nsenter`) exec rather than fork, so the child's pid is QEMU's. Entering
 * the namespace needs root, so `nsenter` comes first; the parent-death
 * signal is set after the user change, which would clear it.
 */
export function qemuCommand(
  binary: string,
  args: readonly string[],
  options: QemuCommandOptions = {},
): [string, string[]] {
  const pdeath = options.killWithParent === true ? ['--pdeathsig', 'SIGKILL'] : [];
  let argv = [binary, ...args];
  if (options.user !== undefined) {
    const { uid, gid } = options.user;
    argv = [
      'setpriv',
      `--reuid=${uid}`,
      `--regid=${gid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      ...pdeath,
      '--',
      ...argv,
    ];
  }
  if (options.netns !== undefined) {
    const path = options.netns.startsWith('/') ? options.netns : `/run/netns/${options.netns}`;
    argv = ['nsenter', `--net=${path}`, '--', ...argv];
  }
  if (options.user === undefined && pdeath.length > 0) argv = ['setpriv', ...pdeath, '--', ...argv];
  return [argv[0] as string, argv.slice(1)];
}
