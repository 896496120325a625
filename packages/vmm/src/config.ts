/**
 * The vmm section of the node daemon's configuration (style R7): plain
 * `field.*` leaves with defaults and environment variables; the daemon's
 * schema composes it as `vmm`.
 *
 * @module
 */
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
  cpuKhz: field.integer({
    default: 0,
    env: 'AENV_VMM_CPU_KHZ',
    max: 100_000_000,
    doc: 'Host TSC frequency in kHz given to TCG guests; 0 reads it from /proc/cpuinfo.',
  }),
};

/** The loaded vmm configuration. */
export type VmmConfig = ResolvedConfig<typeof vmmConfigSchema>;
