/**
 * The vmm section of the node daemon's configuration (style R7): plain
 * `field.*` leaves with defaults and environment variables; the daemon's
 * schema composes it as `vmm`.
 *
 * @module
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { field, type ResolvedConfig } from '@aenv/shared';

/** Driver choices: `auto` picks firecracker when its binary and hardware KVM exist, else qemu. */
export const DRIVER_CHOICES = ['auto', 'qemu', 'firecracker'] as const;
/** Acceleration choices for the qemu driver: `auto` uses KVM when hardware KVM is usable. */
export const ACCEL_CHOICES = ['auto', 'kvm', 'tcg'] as const;

/** The vmm configuration schema. */
export const vmmConfigSchema = {
  driver: field.oneOf(DRIVER_CHOICES, {
    default: 'auto',
    env: 'AENV_VMM_DRIVER',
    doc: 'VMM driver: auto, qemu or firecracker.',
  }),
  accel: field.oneOf(ACCEL_CHOICES, {
    default: 'auto',
    env: 'AENV_VMM_ACCEL',
    doc: 'qemu acceleration: auto (KVM if hardware KVM works, else TCG), kvm or tcg.',
  }),
  qemuBinary: field.string({
    default: 'qemu-system-x86_64',
    env: 'AENV_QEMU_BINARY',
    doc: 'QEMU system emulator: a name on PATH or an absolute path.',
  }),
  firecrackerBinary: field.string({
    default: 'firecracker',
    env: 'AENV_FIRECRACKER_BINARY',
    doc: 'Firecracker binary: a name on PATH or an absolute path.',
  }),
  firecrackerJailer: field.string({
    default: '',
    env: 'AENV_FIRECRACKER_JAILER',
    doc: "Firecracker's jailer binary; empty runs Firecracker without it.",
  }),
  firecrackerJailUid: field.integer({
    default: 65534,
    env: 'AENV_FIRECRACKER_JAIL_UID',
    max: 4_294_967_294,
    doc: 'User the jailed Firecracker runs as (a uid of its own: writable drives are chowned to it).',
  }),
  firecrackerJailGid: field.integer({
    default: 65534,
    env: 'AENV_FIRECRACKER_JAIL_GID',
    max: 4_294_967_294,
    doc: 'Group the jailed Firecracker runs as.',
  }),
  firecrackerChrootBaseDir: field.string({
    default: '/srv/jailer',
    env: 'AENV_FIRECRACKER_CHROOT_BASE',
    doc: 'Base of the jailer chroots, on the filesystem of images and snapshots (files are hard-linked in).',
  }),
  firecrackerSnapshotEditor: field.string({
    default: '',
    env: 'AENV_FIRECRACKER_SNAPSHOT_EDITOR',
    doc: "Firecracker's snapshot-editor, to merge Diff snapshots onto their base.",
  }),
  firecrackerTrackDirtyPages: field.boolean({
    default: false,
    env: 'AENV_FIRECRACKER_TRACK_DIRTY_PAGES',
    doc: 'KVM dirty-page tracking, needed for Diff snapshots (costs guest write speed).',
  }),
  nbdClient: field.string({
    default: 'nbd-client',
    env: 'AENV_NBD_CLIENT',
    doc: 'nbd-client program that attaches NBD drives for Firecracker.',
  }),
  qemuUser: field.string({
    default: '',
    env: 'AENV_QEMU_USER',
    doc: 'With the jail off: run QEMU as this user, "uid:gid" (numeric); empty runs it as the daemon user (see docs/vmm.md for what the user needs).',
  }),
  jail: field.boolean({
    default: true,
    env: 'AENV_VMM_JAIL',
    doc: "Jail every QEMU: its own uid/gid, a cgroup with memory/CPU/pids limits, a mount namespace without the daemon's files (root on Linux only; otherwise off, and the startup log says why).",
  }),
  jailUidBase: field.integer({
    default: 200_000,
    env: 'AENV_VMM_JAIL_UID_BASE',
    min: 1,
    max: 4_294_000_000,
    doc: 'Jailed VMMs run as uid = gid = base+1 .. base+count; gid base is their common group (reads snapshot memory). Use ids no host user or group has.',
  }),
  jailUidCount: field.integer({
    default: 4096,
    env: 'AENV_VMM_JAIL_UID_COUNT',
    min: 1,
    max: 1_000_000,
    doc: 'How many jailed VMMs may run at once (one uid each).',
  }),
  jailMemoryOverheadMiB: field.integer({
    default: 256,
    env: 'AENV_VMM_JAIL_MEMORY_OVERHEAD_MIB',
    min: 16,
    max: 1_048_576,
    doc: "Memory a jailed VMM's cgroup allows beyond guest RAM (QEMU itself, the TCG code cache).",
  }),
  jailCpuLimit: field.boolean({
    default: true,
    env: 'AENV_VMM_JAIL_CPU_LIMIT',
    doc: "Limit a jailed VMM's CPU time to its vcpus (cgroup cpu quota = vcpus x period).",
  }),
  jailPidsMax: field.integer({
    default: 512,
    env: 'AENV_VMM_JAIL_PIDS_MAX',
    min: 16,
    max: 1_000_000,
    doc: "A jailed VMM's cgroup pids.max (its threads).",
  }),
  jailHide: field.list({
    default: [
      '/root',
      '/home',
      '/tmp',
      '/var/tmp',
      '/run',
      '/srv',
      '/mnt',
      '/media',
      '/dev/shm',
      '/var/lib/aenv',
    ],
    env: 'AENV_VMM_JAIL_HIDE',
    doc: "Directories a jailed VMM sees empty (its own files excepted); the daemon's home is always added.",
  }),
  qemuSandbox: field.boolean({
    default: true,
    env: 'AENV_QEMU_SANDBOX',
    doc: "QEMU's own seccomp filter (-sandbox on with obsolete, elevateprivileges, spawn and resourcecontrol denied).",
  }),
  qemuBalloon: field.boolean({
    default: true,
    env: 'AENV_QEMU_BALLOON',
    doc: 'A virtio-balloon with free-page reporting in booted qemu VMs, so memory the guest frees goes back to the host.',
  }),
  qemuHelperDir: field.path({
    default: join(tmpdir(), 'aenv-vmm-helpers'),
    env: 'AENV_QEMU_HELPER_DIR',
    doc: "Where the qemu driver builds and keeps its private-RAM helper (owned by the daemon's user, not writable by others; QEMU's user must be able to read it).",
  }),
  guestKernel: field.optionalPath({
    default: undefined,
    env: 'AENV_GUEST_KERNEL',
    doc: 'A guest kernel (PVH vmlinux) every qemu boot uses instead of the guest artifacts; snapshots of another kernel are refused.',
  }),
  guestInitrd: field.optionalPath({
    default: undefined,
    env: 'AENV_GUEST_INITRD',
    doc: "The initramfs that goes with guestKernel; unset keeps the guest artifacts' initramfs.",
  }),
  kvmPvm: field.boolean({
    default: false,
    env: 'AENV_VMM_KVM_PVM',
    doc: 'Count a PVM-only /dev/kvm (kvm_pvm) as usable KVM; guestKernel must then be a PVM guest kernel.',
  }),
  cpuKhz: field.integer({
    default: 0,
    env: 'AENV_VMM_CPU_KHZ',
    max: 100_000_000,
    doc: 'Host TSC frequency in kHz given to TCG guests; 0 reads it from /proc/cpuinfo.',
  }),
};

/** The loaded vmm configuration. */
export type VmmConfig = ResolvedConfig<typeof vmmConfigSchema>;
