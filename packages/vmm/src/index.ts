/**
 * `@aenv/vmm`: the VMM driver interface and its drivers (qemu, firecracker).
 *
 * Start with {@link createVmmDriver} (from config), `new QemuDriver(...)` or
 * `FirecrackerDriver.create(...)`,
 * then `boot`/`restore` VMs. The QMP client and process plumbing are
 * private to the qemu driver and not exported.
 *
 * @module
 */
export type {
  CompleteRestoreOptions,
  ConsoleSpec,
  ConsoleWaitOptions,
  DriveSource,
  DriveSpec,
  ExitInfo,
  ExitReason,
  GuestParams,
  NetworkSpec,
  PreparedRestore,
  PreparedRestoreState,
  RestoreSpec,
  SnapshotRef,
  SnapshotTarget,
  VirtualizationMode,
  Vm,
  VmmCapability,
  VmmDriver,
  VmmDriverKind,
  VmSpec,
} from './driver.js';
export { VM_STATES, VM_TRANSITIONS, VmStateMachine, type VmState } from './vm-state.js';
export {
  MANIFEST_FILE,
  SNAPSHOT_FORMAT_VERSION,
  SNAPSHOT_MAGIC,
  readManifest,
  type SnapshotManifest,
} from './snapshot-manifest.js';
export { VMM_CHANNELS, VMM_JAIL_CHANNEL, type VmmEvent, type VmmOp } from './events.js';
export {
  BASE_KERNEL_ARGS,
  GUEST_KERNEL_PARAMS,
  buildKernelCmdline,
  guestKernelArgs,
} from './kernel-args.js';
export {
  decideKvm,
  findExecutable,
  hostCpuKhz,
  probeKvm,
  type KvmOptions,
  type KvmProbe,
} from './host-probe.js';
export { notSupported } from './errors.js';
export { validateRestoreSpec, validateVmId, validateVmSpec } from './vm-spec.js';
export { ACCEL_CHOICES, DRIVER_CHOICES, vmmConfigSchema, type VmmConfig } from './config.js';
export {
  IMPLEMENTED_DRIVERS,
  createVmmDriver,
  parseQemuUser,
  selectDriver,
  type DriverChoice,
  type DriverFacts,
  type DriverHost,
} from './create-vmm-driver.js';
export {
  QEMU_CAPABILITIES,
  QemuDriver,
  qemuVersion,
  type QemuDriverOptions,
} from './qemu/qemu-driver.js';
export { QEMU_SANDBOX, type QemuIdentity } from './qemu/qemu-args.js';
export {
  PAGE_SIZE,
  RAM_DIFF_MAGIC,
  decodeRamDiffHeader,
  type PageRun,
  type RamDiffHeader,
} from './qemu/ram-diff.js';
export {
  FIRECRACKER_CAPABILITIES,
  FirecrackerDriver,
  firecrackerVersion,
  type FirecrackerDriverOptions,
} from './firecracker/firecracker-driver.js';
export type { FirecrackerSnapshotTarget, FirecrackerVm } from './firecracker/firecracker-vm.js';
export {
  NbdAttacher,
  type NbdAttacherOptions,
  type NbdDevice,
  type NbdProbe,
} from './firecracker/nbd-attachment.js';
export type { JailerOptions } from './firecracker/vmm-layout.js';
export type { FirecrackerMetrics } from './firecracker/vmm-telemetry.js';
export type { Balloon, BalloonStats, CpuTemplate } from './firecracker/api-types.js';
export { JailUidPool, type JailIdentity } from './jail/jail-uid-pool.js';
export {
  jailCommand,
  jailMounts,
  type JailBind,
  type JailCommandSpec,
} from './jail/jail-command.js';
export {
  CGROUP_PARENT,
  detectCgroups,
  vmCgroupPlan,
  type CgroupHost,
  type CgroupLimits,
  type CgroupPlan,
} from './jail/vm-cgroup.js';
export { JAIL_TAP_FD, QemuJail, type QemuJailConfig } from './qemu/qemu-jail.js';
export { jailDecision, qemuJailConfig, JAIL_HELPER_SOURCE } from './qemu/qemu-jail-config.js';
