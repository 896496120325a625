import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bootPlan,
  restorePlan,
  type FirecrackerMachine,
  type TelemetryPaths,
} from './firecracker-config.js';

const telemetry: TelemetryPaths = {
  logPath: '/run/x/log.fifo',
  metricsPath: '/run/x/m.fifo',
  logLevel: 'Warning',
};
const machine: FirecrackerMachine = {
  vcpus: 2,
  memoryMiB: 512,
  smt: false,
  cpuTemplate: 'None',
  hugePages: 'None',
  trackDirtyPages: true,
  kernel: '/k/vmlinux',
  initrd: null,
  cmdline: 'console=ttyS0 reboot=k',
  drives: [
    {
      id: 'rootfs',
      path: '/proc/self/fd/3',
      readOnly: false,
      ioEngine: 'Sync',
      cacheType: 'Unsafe',
    },
    {
      id: 'tools',
      path: '/proc/self/fd/4',
      readOnly: true,
      ioEngine: 'Async',
      cacheType: 'Writeback',
    },
  ],
  network: { tap: 'tap0', mac: '02:AB:00:00:00:01' },
  balloon: { amount_mib: 0, deflate_on_oom: true, free_page_reporting: true },
  entropy: {},
  vsock: { guestCid: 3, udsPath: '/run/x/vsock.sock' },
};

describe('bootPlan', () => {
  it('configures telemetry first, every device, and starts last', () => {
    const plan = bootPlan(machine, telemetry);
    assert.deepEqual(
      plan.map((s) => s.op),
      [
        'putLogger',
        'putMetrics',
        'putMachineConfiguration',
        'putGuestBootSource',
        'putGuestDriveByID',
        'putGuestDriveByID',
        'putGuestNetworkInterfaceByID',
        'putBalloon',
        'putEntropyDevice',
        'putGuestVsock',
        'createSyncAction',
      ],
    );
    assert.deepEqual(plan[2]?.body, {
      vcpu_count: 2,
      mem_size_mib: 512,
      smt: false,
      track_dirty_pages: true,
      cpu_template: 'None',
      huge_pages: 'None',
    });
    assert.deepEqual(plan[3]?.body, {
      kernel_image_path: '/k/vmlinux',
      boot_args: 'console=ttyS0 reboot=k',
    });
    assert.deepEqual(plan[5], {
      op: 'putGuestDriveByID',
      path: { drive_id: 'tools' },
      body: {
        drive_id: 'tools',
        path_on_host: '/proc/self/fd/4',
        is_root_device: false,
        is_read_only: true,
        cache_type: 'Writeback',
        io_engine: 'Async',
      },
    });
    assert.deepEqual(plan[6]?.body, {
      iface_id: 'eth0',
      host_dev_name: 'tap0',
      guest_mac: '02:ab:00:00:00:01',
    });
    assert.deepEqual(plan.at(-1)?.body, { action_type: 'InstanceStart' });
  });

  it('leaves out what the VM does not have', () => {
    const bare = {
      ...machine,
      initrd: '/k/initrd',
      network: null,
      balloon: null,
      entropy: null,
      vsock: null,
      drives: [],
    };
    const plan = bootPlan(bare, telemetry);
    assert.deepEqual(
      plan.map((s) => s.op),
      [
        'putLogger',
        'putMetrics',
        'putMachineConfiguration',
        'putGuestBootSource',
        'createSyncAction',
      ],
    );
    assert.equal((plan[3]?.body as { initrd_path: string }).initrd_path, '/k/initrd');
  });
});

describe('restorePlan', () => {
  it('loads with a File backend and overrides the tap and vsock', () => {
    const plan = restorePlan(
      {
        statePath: '/s/vmstate',
        memoryPath: '/s/memory',
        trackDirtyPages: false,
        tap: 'tap7',
        vsockPath: '/r/vsock.sock',
        resume: true,
      },
      telemetry,
    );
    assert.deepEqual(
      plan.map((s) => s.op),
      ['putLogger', 'putMetrics', 'loadSnapshot'],
    );
    assert.deepEqual(plan[2]?.body, {
      snapshot_path: '/s/vmstate',
      mem_backend: { backend_type: 'File', backend_path: '/s/memory' },
      track_dirty_pages: false,
      resume_vm: true,
      network_overrides: [{ iface_id: 'eth0', host_dev_name: 'tap7' }],
      vsock_override: { uds_path: '/r/vsock.sock' },
    });
  });

  it('sends no overrides for devices the snapshot lacks', () => {
    const [, , load] = restorePlan(
      {
        statePath: '/s',
        memoryPath: '/m',
        trackDirtyPages: true,
        tap: null,
        vsockPath: null,
        resume: false,
      },
      telemetry,
    );
    assert.deepEqual(Object.keys(load?.body as object).sort(), [
      'mem_backend',
      'resume_vm',
      'snapshot_path',
      'track_dirty_pages',
    ]);
    const [, , withClock] = restorePlan(
      {
        statePath: '/s',
        memoryPath: '/m',
        trackDirtyPages: true,
        tap: null,
        vsockPath: null,
        resume: true,
        clockRealtime: true,
      },
      telemetry,
    );
    assert.equal((withClock?.body as { clock_realtime?: boolean }).clock_realtime, true);
  });
});
