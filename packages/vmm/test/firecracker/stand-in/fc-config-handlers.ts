/**
 * The stand-in's handlers for configuration requests (test code): what
 * Firecracker checks beyond the schema when a resource is configured. Like
 * Firecracker, devices are built when configured, so a missing kernel,
 * drive file or tap fails the `PUT`, not the boot.
 *
 * @module
 */
import type {
  Balloon,
  BootSource,
  Drive,
  Logger,
  MachineConfiguration,
  MmdsConfig,
  NetworkInterface,
  Pmem,
} from '../../../src/firecracker/api-types.js';
import {
  LOG_LEVELS,
  NO_CONTENT,
  fault,
  log,
  type Answer,
  type Core,
  type Handler,
} from './fc-core.js';
import { LineSink, tapExists } from './fc-io.js';

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

function idMismatch(kind: string, pathId: string | undefined, bodyId: string): Answer | undefined {
  if (pathId === bodyId) return undefined;
  return fault(
    `The id from the path [${pathId}] does not match the id from the body [${bodyId}]! (${kind})`,
  );
}

function machineFault(m: MachineConfiguration): Answer | undefined {
  if (m.smt === true && m.vcpu_count !== 1 && m.vcpu_count % 2 !== 0) {
    return fault(
      'Machine config error: The vCPU number is invalid! The vCPU number can only be 1 or an even number when SMT is enabled.',
    );
  }
  if (m.huge_pages === '2M' && m.mem_size_mib % 2 !== 0) {
    return fault(
      'Machine config error: The memory size (MiB) must be a multiple of 2 with 2M huge pages.',
    );
  }
  if (m.mem_size_mib < 1) return fault('Machine config error: The memory size (MiB) is invalid.');
  return undefined;
}

function putMachine(core: Core, body: MachineConfiguration, patch: boolean): Answer {
  const base = patch
    ? core.cfg.machine
    : { vcpu_count: 1, mem_size_mib: 128, smt: false, track_dirty_pages: false };
  const next = { ...base, ...body };
  const bad = machineFault(next);
  if (bad !== undefined) return bad;
  core.cfg.machine = next;
  core.trackDirty = next.track_dirty_pages === true;
  return NO_CONTENT;
}

function putBootSource(core: Core, body: BootSource): Answer {
  const kernel = core.env.paths.check(body.kernel_image_path, false);
  if (kernel !== undefined)
    return fault(`Boot source error: The kernel file cannot be opened: ${kernel}`);
  if (body.initrd_path !== undefined) {
    const initrd = core.env.paths.check(body.initrd_path, false);
    if (initrd !== undefined)
      return fault(`Boot source error: The initrd file cannot be opened: ${initrd}`);
  }
  core.cfg.boot = body;
  return NO_CONTENT;
}

function putDrive(core: Core, id: string | undefined, body: Drive): Answer {
  const mismatch = idMismatch('drive', id, body.drive_id);
  if (mismatch !== undefined) return mismatch;
  const vhost = body.socket !== undefined;
  if (vhost === (body.path_on_host !== undefined)) {
    return fault(
      'Drive config error: exactly one of path_on_host (virtio-block) and socket (vhost-user) must be given',
    );
  }
  if (!vhost) {
    if (body.is_read_only === undefined)
      return fault('Drive config error: is_read_only is required for virtio-block');
    const err = core.env.paths.check(body.path_on_host as string, !body.is_read_only);
    if (err !== undefined)
      return fault(`Drive config error: Unable to create the virtio block device: ${err}`);
  }
  if (
    body.is_root_device &&
    [...core.cfg.drives.values()].some((d) => d.is_root_device && d.drive_id !== body.drive_id)
  ) {
    return fault('Drive config error: A root block device already exists!');
  }
  core.cfg.drives.set(body.drive_id, body);
  return NO_CONTENT;
}

function putNet(core: Core, id: string | undefined, body: NetworkInterface): Answer {
  const mismatch = idMismatch('network interface', id, body.iface_id);
  if (mismatch !== undefined) return mismatch;
  if (body.guest_mac !== undefined && !MAC.test(body.guest_mac)) {
    return fault(`Network interface error: Invalid MAC address ${body.guest_mac}`);
  }
  for (const other of core.cfg.nets.values()) {
    if (other.iface_id === body.iface_id) continue;
    if (other.host_dev_name === body.host_dev_name)
      return fault(
        `Network interface error: The host device name ${body.host_dev_name} is already in use.`,
      );
    if (body.guest_mac !== undefined && other.guest_mac === body.guest_mac)
      return fault(`Network interface error: The MAC address is already in use: ${body.guest_mac}`);
  }
  if (!tapExists(body.host_dev_name)) {
    return fault(
      `Network interface error: Could not create the network device: Open tap device failed: ${body.host_dev_name} not in this network namespace`,
    );
  }
  core.cfg.nets.set(body.iface_id, body);
  return NO_CONTENT;
}

function putBalloon(core: Core, body: Balloon): Answer {
  if (body.amount_mib > core.cfg.machine.mem_size_mib) {
    return fault(
      'Balloon config error: Amount of pages requested cannot be greater than the total amount of memory.',
    );
  }
  core.cfg.balloon = body;
  return NO_CONTENT;
}

function putLogger(core: Core, body: Logger): Answer {
  try {
    const sink =
      body.log_path === undefined
        ? core.logger?.sink
        : LineSink.open(core.env.paths.host(body.log_path));
    if (sink === undefined) return fault('Logger error: no log path is configured');
    const level = LOG_LEVELS.findIndex(
      (l) => l.toLowerCase() === (body.level ?? 'Info').toLowerCase(),
    );
    core.logger = { sink, level };
    log(core, 'Info', `Running Firecracker v${core.env.version}`);
    return NO_CONTENT;
  } catch (err) {
    return fault(`Logger error: Failed to open target file: ${(err as Error).message}`);
  }
}

function putMetrics(core: Core, path: string): Answer {
  if (core.metrics !== undefined)
    return fault('Metrics error: Reinitialization of metrics not allowed.');
  try {
    core.metrics = LineSink.open(core.env.paths.host(path));
    return NO_CONTENT;
  } catch (err) {
    return fault(`Metrics error: Cannot initialize the metrics system: ${(err as Error).message}`);
  }
}

function putPmem(core: Core, id: string | undefined, body: Pmem): Answer {
  const mismatch = idMismatch('pmem', id, body.id);
  if (mismatch !== undefined) return mismatch;
  const err = core.env.paths.check(body.path_on_host, body.read_only !== true);
  if (err !== undefined) return fault(`Pmem device error: cannot open the backing file: ${err}`);
  core.cfg.pmem.set(body.id, body);
  return NO_CONTENT;
}

/** Handlers of configuration requests, by operation id. */
export function configHandlers(core: Core): Record<string, Handler> {
  return {
    getMachineConfiguration: () => ({ status: 200, body: core.cfg.machine }),
    putMachineConfiguration: (_, b: MachineConfiguration) => putMachine(core, b, false),
    patchMachineConfiguration: (_, b: MachineConfiguration) => putMachine(core, b, true),
    putGuestBootSource: (_, b: BootSource) => putBootSource(core, b),
    putGuestDriveByID: (p, b: Drive) => putDrive(core, p.drive_id, b),
    putGuestNetworkInterfaceByID: (p, b: NetworkInterface) => putNet(core, p.iface_id, b),
    putGuestPmemByID: (p, b: Pmem) => putPmem(core, p.id, b),
    putBalloon: (_, b: Balloon) => putBalloon(core, b),
    putEntropyDevice: (_, b) => ((core.cfg.entropy = b), NO_CONTENT),
    putGuestVsock: (_, b) => ((core.cfg.vsock = b), NO_CONTENT),
    putSerialDevice: (_, b) => ((core.cfg.serial = b), NO_CONTENT),
    putCpuConfiguration: (_, b) => ((core.cfg.cpuConfig = b ?? {}), NO_CONTENT),
    putMemoryHotplug: (_, b) => ((core.cfg.hotplug = b), NO_CONTENT),
    putLogger: (_, b: Logger) => putLogger(core, b),
    putMetrics: (_, b: { metrics_path: string }) => putMetrics(core, b.metrics_path),
    putMmdsConfig: (_, b: MmdsConfig) => {
      const unknown = b.network_interfaces.find((i) => !core.cfg.nets.has(i));
      if (unknown !== undefined)
        return fault(
          `MMDS config error: The list of network interface IDs provided contains at least one ID that does not correspond to any existing network interface: ${unknown}`,
        );
      core.cfg.mmdsConfig = b;
      return NO_CONTENT;
    },
    putMmds: (_, b: Record<string, unknown>) => ((core.cfg.mmds = b), NO_CONTENT),
    patchMmds: (_, b: Record<string, unknown>) => {
      if (core.cfg.mmds === undefined)
        return fault('MMDS error: The MMDS data store is not initialized.');
      core.cfg.mmds = { ...core.cfg.mmds, ...b };
      return NO_CONTENT;
    },
    getMmds: () =>
      core.cfg.mmds === undefined
        ? { status: 404, body: { fault_message: 'The MMDS data store is not initialized.' } }
        : { status: 200, body: core.cfg.mmds },
  };
}
