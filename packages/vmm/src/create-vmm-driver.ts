/**
 * Choosing and constructing the VMM driver from configuration.
 *
 * `auto` picks firecracker only where it can run (its binary and hardware
 * KVM are present) and this build has the driver; otherwise qemu. The qemu
 * driver runs KVM when hardware KVM is usable and TCG otherwise, unless the
 * config forces one (forcing `kvm` where it is unusable is an error, not a
 * silent fallback).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { VirtualizationMode, VmmDriver } from './driver.js';
import { notSupported } from './errors.js';
import { findExecutable, hostCpuKhz, probeKvm, type KvmProbe } from './host-probe.js';
import type { VmmConfig } from './config.js';
import {
  FirecrackerDriver,
  type FirecrackerDriverOptions,
} from './firecracker/firecracker-driver.js';
import { NbdAttacher } from './firecracker/nbd-attachment.js';
import { JailUidPool } from './jail/jail-uid-pool.js';
import { detectCgroups } from './jail/vm-cgroup.js';
import { QemuDriver, qemuVersion } from './qemu/qemu-driver.js';
import { qemuJailConfig } from './qemu/qemu-jail-config.js';

/** Drivers this build implements. */
export const IMPLEMENTED_DRIVERS: readonly ('qemu' | 'firecracker')[] = ['qemu', 'firecracker'];

/** What {@link selectDriver} decides from. */
export interface DriverFacts {
  readonly requested: VmmConfig['driver'];
  readonly accel: VmmConfig['accel'];
  readonly firecrackerFound: boolean;
  readonly kvm: KvmProbe;
  readonly implemented: readonly ('qemu' | 'firecracker')[];
}

/** The decision: which driver, which mode, and why (one line for startup output). */
export interface DriverChoice {
  readonly kind: 'qemu' | 'firecracker';
  readonly mode: VirtualizationMode;
  readonly reason: string;
}

/**
 * Pure driver selection.
 * @throws {AenvError} `VMM_DRIVER_UNAVAILABLE` (KVM forced or firecracker
 *   requested where it cannot run), `VMM_NOT_SUPPORTED` (firecracker
 *   requested but not in this build).
 */
export function selectDriver(f: DriverFacts): DriverChoice {
  const fcPossible = f.firecrackerFound && f.kvm.usable;
  if (f.requested === 'firecracker') {
    if (!f.implemented.includes('firecracker')) {
      throw notSupported(
        'firecracker',
        'starting VMs',
        'the firecracker driver is not part of this build yet',
      );
    }
    if (!fcPossible) {
      const why = f.firecrackerFound ? f.kvm.reason : 'no firecracker binary found';
      throw new AenvError(
        'VMM_DRIVER_UNAVAILABLE',
        `the firecracker driver cannot run here: ${why}`,
      );
    }
    return { kind: 'firecracker', mode: 'kvm', reason: 'configured' };
  }
  if (f.requested === 'auto' && fcPossible && f.implemented.includes('firecracker')) {
    return {
      kind: 'firecracker',
      mode: 'kvm',
      reason: `auto: firecracker binary and ${f.kvm.reason}`,
    };
  }
  if (f.accel === 'kvm' && !f.kvm.usable) {
    throw new AenvError(
      'VMM_DRIVER_UNAVAILABLE',
      `accel kvm is configured but unusable: ${f.kvm.reason}`,
    );
  }
  const mode: VirtualizationMode = f.accel === 'tcg' || !f.kvm.usable ? 'tcg' : 'kvm';
  const why = f.accel === 'auto' ? `auto: ${f.kvm.reason}` : `accel ${f.accel} configured`;
  return { kind: 'qemu', mode, reason: `qemu/${mode} (${why})` };
}

/** What the daemon tells the driver about itself. */
export interface DriverHost {
  /** The daemon's state directory, hidden from jailed VMMs. */
  readonly home?: string;
}

/**
 * Probes the host and constructs the configured driver. The qemu driver
 * jails QEMU when `vmm.jail` is on and the host allows it; `choice.reason`
 * ends with whether it does and why.
 * @throws {AenvError} as {@link selectDriver}; `VMM_DRIVER_UNAVAILABLE` when
 *   the QEMU binary is missing or the jail helper cannot be built.
 */
export async function createVmmDriver(
  config: VmmConfig,
  host: DriverHost = {},
): Promise<{ driver: VmmDriver; choice: DriverChoice }> {
  if (config.kvmPvm && config.guestKernel === undefined) {
    throw new AenvError(
      'INVALID_ARGUMENT',
      'vmm.kvmPvm needs vmm.guestKernel: a PVM-only KVM runs PVM guest kernels only',
    );
  }
  const [kvm, firecracker] = await Promise.all([
    probeKvm(undefined, { pvmGuestKernel: config.kvmPvm }),
    findExecutable(config.firecrackerBinary),
  ]);
  const choice = selectDriver({
    requested: config.driver,
    accel: config.accel,
    firecrackerFound: firecracker !== undefined,
    kvm,
    implemented: IMPLEMENTED_DRIVERS,
  });
  if (choice.kind === 'firecracker') {
    return { driver: await createFirecracker(config, firecracker as string), choice };
  }
  const binary = await findExecutable(config.qemuBinary);
  if (binary === undefined) {
    throw new AenvError(
      'VMM_DRIVER_UNAVAILABLE',
      `QEMU binary ${config.qemuBinary} not found (apt-get install qemu-system-x86)`,
    );
  }
  const cpuKhz = config.cpuKhz > 0 ? config.cpuKhz : await hostCpuKhz();
  const user = parseQemuUser(config.qemuUser);
  const { jail, reason } = await qemuJailConfig(config, host.home === undefined ? [] : [host.home]);
  await jail?.helper();
  const driver = new QemuDriver({
    binary,
    mode: choice.mode,
    vmmVersion: await qemuVersion(binary),
    ...(cpuKhz === undefined ? {} : { cpuKhz }),
    ...(user === undefined || jail !== undefined ? {} : { user }),
    ...(jail === undefined ? {} : { jail }),
    sandbox: config.qemuSandbox,
    balloon: config.qemuBalloon,
    helperDir: config.qemuHelperDir,
    ...(config.guestKernel === undefined
      ? {}
      : {
          guestKernel: {
            kernel: config.guestKernel,
            ...(config.guestInitrd === undefined ? {} : { initrd: config.guestInitrd }),
          },
        }),
  });
  return { driver, choice: { ...choice, reason: `${choice.reason}; ${reason}` } };
}

/**
 * Parses `vmm.qemuUser`: `uid:gid`, or `uid` alone (the group is the same
 * number); empty means QEMU runs as the daemon's user.
 * @throws {AenvError} `INVALID_ARGUMENT` for anything else, or root.
 */
export function parseQemuUser(value: string): { uid: number; gid: number } | undefined {
  if (value === '') return undefined;
  const m = /^(\d{1,10})(?::(\d{1,10}))?$/.exec(value);
  const uid = Number(m?.[1]);
  const gid = m?.[2] === undefined ? uid : Number(m[2]);
  if (m === null || uid <= 0 || uid > 4_294_967_294 || gid > 4_294_967_294) {
    throw new AenvError(
      'INVALID_ARGUMENT',
      `vmm.qemuUser must be "uid:gid" of a non-root user, got ${JSON.stringify(value)}`,
    );
  }
  return { uid, gid };
}

/**
 * With the jailer and `vmm.jail` on: each VMM's own uid from the jail
 * range, and cgroup limits where controllers are found.
 */
async function firecrackerJail(
  config: VmmConfig,
): Promise<Pick<FirecrackerDriverOptions, 'jailUids' | 'jailLimits'>> {
  if (config.firecrackerJailer === '' || !config.jail) return {};
  const cgroups = await detectCgroups();
  return {
    jailUids: new JailUidPool(config.jailUidBase, config.jailUidCount),
    ...(cgroups === undefined
      ? {}
      : {
          jailLimits: {
            cgroupVersion: cgroups.version,
            memoryOverheadMiB: config.jailMemoryOverheadMiB,
            cpuLimit: config.jailCpuLimit,
            pidsMax: config.jailPidsMax,
          },
        }),
  };
}

/** The firecracker driver from the `firecracker*` config fields. */
async function createFirecracker(config: VmmConfig, binary: string): Promise<VmmDriver> {
  const jailer = config.firecrackerJailer;
  return FirecrackerDriver.create({
    ...(await firecrackerJail(config)),
    binary,
    ...(jailer === ''
      ? {}
      : {
          jailer: {
            binary: jailer,
            uid: config.firecrackerJailUid,
            gid: config.firecrackerJailGid,
            chrootBaseDir: config.firecrackerChrootBaseDir,
          },
        }),
    ...(config.firecrackerSnapshotEditor === ''
      ? {}
      : { snapshotEditor: config.firecrackerSnapshotEditor }),
    trackDirtyPages: config.firecrackerTrackDirtyPages,
    nbd: new NbdAttacher({ nbdClient: config.nbdClient }),
  });
}
