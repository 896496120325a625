/**
 * The stand-in's handlers for the lifecycle and runtime requests (test
 * code): `InstanceStart`, pause/resume, snapshot create and load, actions,
 * the balloon at runtime, device updates and the read-only queries.
 *
 * Loading follows Firecracker: only on a process where nothing but the
 * logger and metrics was configured; the drives recorded in the state file
 * are reopened at the paths the snapshotted VMM used; taps and the vsock
 * socket may be overridden; a failed load ends the process.
 *
 * @module
 */
import { statSync } from 'node:fs';
import type {
  SnapshotCreateParams,
  SnapshotLoadParams,
} from '../../../src/firecracker/api-types.js';
import { NO_CONTENT, fault, log, type Answer, type Core, type Handler } from './fc-core.js';
import {
  newBootId,
  readGuestState,
  readMemoryPage,
  readStateFile,
  writeMemoryFile,
  writeStateFile,
  type GuestState,
} from './fc-guest.js';
import { listenVsock, tapExists } from './fc-io.js';

const say = (core: Core, text: string): void => core.env.console(`aenv-stand-in: ${text}\r\n`);

function start(core: Core): Answer {
  const boot = core.cfg.boot;
  if (boot === undefined)
    return fault('Start microvm error: Cannot start microvm without kernel configuration.');
  const vsock = core.cfg.vsock;
  if (vsock !== undefined) core.vsockServer = listenVsock(core.env.paths.host(vsock.uds_path));
  const cmdline = boot.boot_args ?? '';
  core.guest = { standIn: 'guest-memory', bootId: newBootId(), resumes: 0, cmdline };
  core.marker = `boot-marker:${core.guest.bootId}`;
  core.dirty = new Set([0, 1]);
  core.state = 'Running';
  const m = core.cfg.machine;
  core.env.console(`[    0.000000] Linux version 6.1.0-stand-in (firecracker stand-in)\r\n`);
  say(
    core,
    `booted boot=${core.guest.bootId} vcpus=${m.vcpu_count} mem=${m.mem_size_mib} uid=${process.getuid?.() ?? -1}`,
  );
  say(core, `cmdline ${cmdline}`);
  return NO_CONTENT;
}

function action(core: Core, type: string): Answer {
  if (type === 'InstanceStart') return start(core);
  if (type === 'FlushMetrics') {
    flushMetrics(core);
    return NO_CONTENT;
  }
  // SendCtrlAltDel: the guest reboots, which ends Firecracker with status 0
  say(core, 'ctrl-alt-del: rebooting');
  core.env.exit(0);
  return NO_CONTENT;
}

/** Writes one metrics line (as Firecracker does on `FlushMetrics` and every 60 s). */
export function flushMetrics(core: Core): void {
  if (core.metrics === undefined) return;
  const groups: Record<string, Record<string, number>> = {};
  for (const [op, n] of core.counters) {
    const group = /^(get|describe)/.test(op)
      ? 'get_api_requests'
      : /^patch/.test(op)
        ? 'patch_api_requests'
        : 'put_api_requests';
    (groups[group] ??= {})[`${op}_count`] = n;
  }
  core.metrics.line(
    JSON.stringify({ utc_timestamp_ms: Date.now(), ...groups, vmm: { state: core.state } }),
  );
}

function snapshotCreate(core: Core, body: SnapshotCreateParams): Answer {
  if (core.state !== 'Paused')
    return fault(
      'Create snapshot error: Cannot save the microVM state: the microVM must be paused.',
    );
  const diff = body.snapshot_type === 'Diff';
  if (diff && !core.trackDirty)
    return fault(
      'Create snapshot error: Diff snapshots are not allowed on uVMs with dirty page tracking disabled.',
    );
  const guest = core.guest as GuestState;
  const pages = new Map<number, string>([
    [0, JSON.stringify(guest)],
    [1, core.marker],
  ]);
  if (diff) for (const i of [0, 1]) if (!core.dirty.has(i)) pages.delete(i);
  const m = core.cfg.machine;
  try {
    writeStateFile(core.env.paths.host(body.snapshot_path), {
      standIn: 'fc-vmstate',
      vmmVersion: core.env.version,
      memSizeMib: m.mem_size_mib,
      vcpuCount: m.vcpu_count,
      drives: [...core.cfg.drives.values()].map((d) => ({
        drive_id: d.drive_id,
        path_on_host: d.path_on_host ?? '',
        is_read_only: d.is_read_only ?? false,
      })),
      nets: [...core.cfg.nets.values()].map((n) => ({
        iface_id: n.iface_id,
        host_dev_name: n.host_dev_name,
        ...(n.guest_mac === undefined ? {} : { guest_mac: n.guest_mac }),
      })),
      vsock:
        core.cfg.vsock === undefined
          ? null
          : { guest_cid: core.cfg.vsock.guest_cid, uds_path: core.cfg.vsock.uds_path },
      balloon: (core.cfg.balloon as Record<string, unknown> | undefined) ?? null,
      entropy: core.cfg.entropy !== undefined,
    });
    writeMemoryFile(core.env.paths.host(body.mem_file_path), m.mem_size_mib, pages);
  } catch (err) {
    return fault(
      `Create snapshot error: Cannot write the snapshot files: ${(err as Error).message}`,
    );
  }
  core.dirty = new Set();
  log(core, 'Info', `'create ${diff ? 'diff' : 'full'} snapshot' VMM action took 1 us.`);
  return NO_CONTENT;
}

function loadDevices(
  core: Core,
  body: SnapshotLoadParams,
  state: ReturnType<typeof readStateFile>,
): void {
  for (const d of state.drives) {
    const err = core.env.paths.check(d.path_on_host, !d.is_read_only);
    if (err !== undefined)
      throw new Error(`Cannot restore devices: block device ${d.drive_id}: ${err}`);
    core.cfg.drives.set(d.drive_id, {
      drive_id: d.drive_id,
      path_on_host: d.path_on_host,
      is_read_only: d.is_read_only,
      is_root_device: false,
    });
  }
  const overrides = new Map(
    (body.network_overrides ?? []).map((o) => [o.iface_id, o.host_dev_name]),
  );
  for (const id of overrides.keys()) {
    if (!state.nets.some((n) => n.iface_id === id))
      throw new Error(`Invalid network override: no network interface with id ${id}`);
  }
  for (const n of state.nets) {
    const tap = overrides.get(n.iface_id) ?? n.host_dev_name;
    if (!tapExists(tap))
      throw new Error(
        `Cannot restore devices: Open tap device failed: ${tap} not in this network namespace`,
      );
    core.cfg.nets.set(n.iface_id, { ...n, host_dev_name: tap });
  }
  if (state.vsock !== null) {
    const uds = body.vsock_override?.uds_path ?? state.vsock.uds_path;
    core.cfg.vsock = { guest_cid: state.vsock.guest_cid, uds_path: uds };
    core.vsockServer = listenVsock(core.env.paths.host(uds));
  } else if (body.vsock_override !== undefined) {
    throw new Error('Invalid vsock override: the snapshot has no vsock device');
  }
  if (state.balloon !== null) core.cfg.balloon = state.balloon as never;
  if (state.entropy) core.cfg.entropy = {};
}

function memoryPath(body: SnapshotLoadParams): string {
  if ((body.mem_file_path === undefined) === (body.mem_backend === undefined)) {
    throw new Error('Either mem_backend or mem_file_path must be present (and not both).');
  }
  if (body.mem_backend?.backend_type === 'Uffd')
    throw new Error('the stand-in does not emulate the Uffd backend');
  return body.mem_backend?.backend_path ?? (body.mem_file_path as string);
}

function snapshotLoad(core: Core, body: SnapshotLoadParams, bootPath: boolean): Answer {
  if (bootPath)
    return fault(
      'Load snapshot error: Loading a microVM snapshot not allowed after configuring boot-specific resources.',
    );
  try {
    const state = readStateFile(core.env.paths.host(body.snapshot_path));
    if (state.vmmVersion !== core.env.version)
      throw new Error(
        `snapshot of Firecracker ${state.vmmVersion} cannot load in ${core.env.version}`,
      );
    const mem = core.env.paths.host(memoryPath(body));
    const size = statSync(mem).size;
    if (size < state.memSizeMib * 1024 * 1024)
      throw new Error(`memory file is ${size} bytes, the snapshot needs ${state.memSizeMib} MiB`);
    const guest = readGuestState(mem);
    core.marker = readMemoryPage(mem, 1);
    loadDevices(core, body, state);
    core.cfg.machine = {
      vcpu_count: state.vcpuCount,
      mem_size_mib: state.memSizeMib,
      track_dirty_pages: body.track_dirty_pages ?? body.enable_diff_snapshots ?? false,
    };
    core.trackDirty = core.cfg.machine.track_dirty_pages === true;
    core.guest = { ...guest, resumes: guest.resumes + 1 };
    core.dirty = new Set([0]);
    core.state = body.resume_vm === true ? 'Running' : 'Paused';
    say(core, `restored boot=${guest.bootId} resumes=${core.guest.resumes} marker=${core.marker}`);
    return NO_CONTENT;
  } catch (err) {
    log(core, 'Error', `Failed to restore from snapshot: ${(err as Error).message}`);
    core.env.exit(1); // Firecracker ends a process whose load failed
    return fault(`Load snapshot error: Failed to restore from snapshot: ${(err as Error).message}`);
  }
}

function balloonStats(core: Core): Answer {
  const b = core.cfg.balloon;
  if (b === undefined) return fault('Balloon device not configured.');
  if ((b.stats_polling_interval_s ?? 0) === 0)
    return fault('Balloon update error: Statistics for the balloon device are not enabled');
  const mib = b.amount_mib;
  return {
    status: 200,
    body: { target_pages: mib * 256, actual_pages: mib * 256, target_mib: mib, actual_mib: mib },
  };
}

function hinting(core: Core, then: () => Answer): Answer {
  if (core.cfg.balloon?.free_page_hinting !== true)
    return fault(
      'Balloon update error: free page hinting was not enabled when the device was configured.',
    );
  return then();
}

function runtimeBalloon(core: Core): Record<string, Handler> {
  return {
    describeBalloonConfig: () =>
      core.cfg.balloon === undefined
        ? fault('Balloon config error: No balloon device found.')
        : { status: 200, body: core.cfg.balloon },
    describeBalloonStats: () => balloonStats(core),
    patchBalloon: (_, b: { amount_mib: number }) => {
      if (core.cfg.balloon === undefined)
        return fault('Balloon update error: No balloon device found.');
      if (b.amount_mib > core.cfg.machine.mem_size_mib)
        return fault(
          'Balloon update error: Amount of pages requested cannot be greater than the total amount of memory.',
        );
      core.cfg.balloon = { ...core.cfg.balloon, amount_mib: b.amount_mib };
      return NO_CONTENT;
    },
    patchBalloonStatsInterval: (_, b: { stats_polling_interval_s: number }) => {
      const cur = core.cfg.balloon?.stats_polling_interval_s ?? 0;
      if (core.cfg.balloon === undefined || cur === 0 || b.stats_polling_interval_s === 0)
        return fault('Balloon update error: Statistics cannot be turned on or off after boot.');
      core.cfg.balloon = {
        ...core.cfg.balloon,
        stats_polling_interval_s: b.stats_polling_interval_s,
      };
      return NO_CONTENT;
    },
    startBalloonHinting: () => hinting(core, () => NO_CONTENT),
    describeBalloonHinting: () =>
      hinting(core, () => ({ status: 200, body: { host_cmd: 2, guest_cmd: 1 } })),
    stopBalloonHinting: () => hinting(core, () => NO_CONTENT),
  };
}

function patchDrive(
  core: Core,
  id: string | undefined,
  b: { drive_id: string; path_on_host?: string },
): Answer {
  const drive = core.cfg.drives.get(b.drive_id);
  if (id !== b.drive_id || drive === undefined)
    return fault(`Drive config error: Invalid block device ID: ${b.drive_id}`);
  if (b.path_on_host !== undefined) {
    const err = core.env.paths.check(b.path_on_host, drive.is_read_only !== true);
    if (err !== undefined)
      return fault(`Drive config error: Unable to patch the block device: ${err}`);
    core.cfg.drives.set(b.drive_id, { ...drive, path_on_host: b.path_on_host });
  }
  return NO_CONTENT;
}

/** Handlers of lifecycle and runtime requests, by operation id. */
export function runtimeHandlers(core: Core, bootPath: () => boolean): Record<string, Handler> {
  return {
    describeInstance: () => ({
      status: 200,
      body: {
        app_name: 'Firecracker',
        id: core.env.id,
        state: core.state,
        vmm_version: core.env.version,
      },
    }),
    getFirecrackerVersion: () => ({ status: 200, body: { firecracker_version: core.env.version } }),
    createSyncAction: (_, b: { action_type: string }) => action(core, b.action_type),
    patchVm: (_, b: { state: 'Paused' | 'Resumed' }) => (
      (core.state = b.state === 'Paused' ? 'Paused' : 'Running'),
      NO_CONTENT
    ),
    createSnapshot: (_, b: SnapshotCreateParams) => snapshotCreate(core, b),
    loadSnapshot: (_, b: SnapshotLoadParams) => snapshotLoad(core, b, bootPath()),
    patchGuestDriveByID: (p, b: { drive_id: string; path_on_host?: string }) =>
      patchDrive(core, p.drive_id, b),
    patchGuestNetworkInterfaceByID: (p, b: { iface_id: string }) =>
      p.iface_id === b.iface_id && core.cfg.nets.has(b.iface_id)
        ? NO_CONTENT
        : fault(`Network interface error: Invalid network interface ID: ${b.iface_id}`),
    patchGuestPmemByID: (p, b: { id: string }) =>
      p.id === b.id && core.cfg.pmem.has(b.id)
        ? NO_CONTENT
        : fault(`Pmem device error: Invalid pmem device ID: ${b.id}`),
    getMemoryHotplug: () =>
      core.cfg.hotplug === undefined
        ? fault('Memory hotplug error: device not configured')
        : {
            status: 200,
            body: {
              ...core.cfg.hotplug,
              plugged_size_mib: 0,
              requested_size_mib: core.cfg.hotplug.requested_size_mib ?? 0,
            },
          },
    patchMemoryHotplug: (_, b: { requested_size_mib?: number }) => {
      if (core.cfg.hotplug === undefined)
        return fault('Memory hotplug error: device not configured');
      core.cfg.hotplug = {
        ...core.cfg.hotplug,
        ...(b.requested_size_mib === undefined ? {} : { requested_size_mib: b.requested_size_mib }),
      };
      return NO_CONTENT;
    },
    getExportVmConfig: () => ({ status: 200, body: exportConfig(core) }),
    ...runtimeBalloon(core),
  };
}

function exportConfig(core: Core): Record<string, unknown> {
  const c = core.cfg;
  return {
    'machine-config': c.machine,
    ...(c.boot === undefined ? {} : { 'boot-source': c.boot }),
    drives: [...c.drives.values()],
    'network-interfaces': [...c.nets.values()],
    ...(c.balloon === undefined ? {} : { balloon: c.balloon }),
    ...(c.vsock === undefined ? {} : { vsock: c.vsock }),
    ...(c.entropy === undefined ? {} : { entropy: c.entropy }),
  };
}
