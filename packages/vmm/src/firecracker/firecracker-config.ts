/**
 * The Firecracker configuration of one VM as plain data, and the API calls
 * that apply it: pure, tested beside.
 *
 * A {@link FirecrackerMachine} holds every path as the VMM sees it (inside
 * the jail when there is one). {@link bootPlan} and {@link restorePlan}
 * turn it into the ordered list of API calls the driver sends; the
 * contract test runs the same lists through a stand-in that checks them
 * against Firecracker's spec and state rules.
 *
 * Order matters: the logger and metrics come first (before anything else
 * Firecracker would log, and because `PUT /snapshot/load` is only accepted
 * on a process where nothing but them was configured); `InstanceStart` is
 * last.
 *
 * @module
 */
import type { OperationId } from './api-client.js';
import type {
  Balloon,
  CpuTemplate,
  Drive,
  EntropyDevice,
  NetworkInterface,
  SnapshotLoadParams,
} from './api-types.js';

/** Interface id of the one network device. */
export const NET_IFACE_ID = 'eth0';

/**
 * Kernel arguments every Firecracker guest gets, before the caller's:
 * reboot through the i8042 controller (Firecracker exits on it), no PCI
 * probe (devices are virtio-mmio), no probing of a keyboard aux port.
 */
export const FIRECRACKER_KERNEL_ARGS: readonly string[] = [
  'reboot=k',
  'pci=off',
  'i8042.noaux',
  'i8042.nomux',
  'i8042.dumbkbd',
];

/** A drive as Firecracker sees it. */
export interface FirecrackerDrive {
  readonly id: string;
  /** Path inside the VMM's view (`/proc/self/fd/N` or a path in the jail). */
  readonly path: string;
  readonly readOnly: boolean;
  readonly ioEngine: 'Sync' | 'Async';
  readonly cacheType: 'Unsafe' | 'Writeback';
}

/** Everything the boot API calls need. */
export interface FirecrackerMachine {
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly smt: boolean;
  readonly cpuTemplate: CpuTemplate;
  readonly hugePages: 'None' | '2M';
  readonly trackDirtyPages: boolean;
  readonly kernel: string;
  readonly initrd: string | null;
  readonly cmdline: string;
  readonly drives: readonly FirecrackerDrive[];
  readonly network: { readonly tap: string; readonly mac: string; readonly mtu?: number } | null;
  readonly balloon: Balloon | null;
  readonly entropy: EntropyDevice | null;
  readonly vsock: { readonly guestCid: number; readonly udsPath: string } | null;
}

/** Where the VMM writes its log and metrics (FIFOs the driver reads). */
export interface TelemetryPaths {
  readonly logPath: string;
  readonly metricsPath: string;
  readonly logLevel: 'Error' | 'Warning' | 'Info' | 'Debug';
}

/** One API call: an operation, its path parameters and body. */
export interface ApiStep {
  readonly op: OperationId;
  readonly path?: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

function telemetrySteps(t: TelemetryPaths): ApiStep[] {
  return [
    {
      op: 'putLogger',
      body: { log_path: t.logPath, level: t.logLevel, show_level: true, show_log_origin: false },
    },
    { op: 'putMetrics', body: { metrics_path: t.metricsPath } },
  ];
}

/** The `Drive` body of one drive. */
export function driveBody(d: FirecrackerDrive): Drive {
  return {
    drive_id: d.id,
    path_on_host: d.path,
    is_root_device: false,
    is_read_only: d.readOnly,
    cache_type: d.cacheType,
    io_engine: d.ioEngine,
  };
}

/** The `NetworkInterface` body. */
export function networkBody(net: NonNullable<FirecrackerMachine['network']>): NetworkInterface {
  return {
    iface_id: NET_IFACE_ID,
    host_dev_name: net.tap,
    guest_mac: net.mac.toLowerCase(),
    ...(net.mtu === undefined ? {} : { mtu: net.mtu }),
  };
}

/** The API calls that configure and start a fresh VM, in order. */
export function bootPlan(m: FirecrackerMachine, t: TelemetryPaths): ApiStep[] {
  const steps = telemetrySteps(t);
  steps.push({
    op: 'putMachineConfiguration',
    body: {
      vcpu_count: m.vcpus,
      mem_size_mib: m.memoryMiB,
      smt: m.smt,
      track_dirty_pages: m.trackDirtyPages,
      cpu_template: m.cpuTemplate,
      huge_pages: m.hugePages,
    },
  });
  steps.push({
    op: 'putGuestBootSource',
    body: {
      kernel_image_path: m.kernel,
      boot_args: m.cmdline,
      ...(m.initrd === null ? {} : { initrd_path: m.initrd }),
    },
  });
  for (const d of m.drives) {
    steps.push({ op: 'putGuestDriveByID', path: { drive_id: d.id }, body: driveBody(d) });
  }
  if (m.network !== null) {
    steps.push({
      op: 'putGuestNetworkInterfaceByID',
      path: { iface_id: NET_IFACE_ID },
      body: networkBody(m.network),
    });
  }
  if (m.balloon !== null) steps.push({ op: 'putBalloon', body: m.balloon });
  if (m.entropy !== null) steps.push({ op: 'putEntropyDevice', body: m.entropy });
  if (m.vsock !== null) {
    steps.push({
      op: 'putGuestVsock',
      body: { guest_cid: m.vsock.guestCid, uds_path: m.vsock.udsPath },
    });
  }
  steps.push({ op: 'createSyncAction', body: { action_type: 'InstanceStart' } });
  return steps;
}

/** What a restore loads, as the VMM sees it. */
export interface RestoreLoad {
  readonly statePath: string;
  readonly memoryPath: string;
  readonly trackDirtyPages: boolean;
  /** The tap of the new VM, when the snapshot has a network device. */
  readonly tap: string | null;
  /** The new vsock socket, when the snapshot has a vsock device. */
  readonly vsockPath: string | null;
  /** Resume in the same call (the driver does, to spare a round trip). */
  readonly resume: boolean;
  /** Advance the guest's kvmclock by the time since the snapshot (x86). */
  readonly clockRealtime?: boolean;
}

/**
 * The API calls that load a snapshot into a fresh VMM: telemetry, then
 * `PUT /snapshot/load` with the memory file as a `File` backend, which
 * Firecracker maps `MAP_PRIVATE` (copy-on-write).
 */
export function restorePlan(r: RestoreLoad, t: TelemetryPaths): ApiStep[] {
  const body: SnapshotLoadParams = {
    snapshot_path: r.statePath,
    mem_backend: { backend_type: 'File', backend_path: r.memoryPath },
    track_dirty_pages: r.trackDirtyPages,
    resume_vm: r.resume,
    ...(r.tap === null
      ? {}
      : { network_overrides: [{ iface_id: NET_IFACE_ID, host_dev_name: r.tap }] }),
    ...(r.vsockPath === null ? {} : { vsock_override: { uds_path: r.vsockPath } }),
    ...(r.clockRealtime === true ? { clock_realtime: true } : {}),
  };
  return [...telemetrySteps(t), { op: 'loadSnapshot', body }];
}
