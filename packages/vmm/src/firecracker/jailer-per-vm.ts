/**
 * Firecracker's jailer, per VM: the configured {@link JailerOptions} with
 * the VM's own uid/gid (from the same {@link JailUidPool} as the qemu
 * jail) and `--cgroup` limits from its shape, under the `aenv` parent
 * cgroup. Pure, tested beside; the driver takes the identity when the VM
 * starts and gives it back when the VMM has exited.
 *
 * The jailer writes each `--cgroup <file>=<value>` into the VM's cgroup
 * (`<parent>/<id>`) before it execs Firecracker, and its chroot holds only
 * the VM's hard-linked files (see `vmm-layout.ts`).
 *
 * @module
 */
import type { JailIdentity } from '../jail/jail-uid-pool.js';
import { CGROUP_PARENT } from '../jail/vm-cgroup.js';
import type { JailerOptions } from './vmm-layout.js';

/** The limits every jailed Firecracker gets. */
export interface FirecrackerJailLimits {
  readonly cgroupVersion: 1 | 2;
  /** Memory beyond guest RAM (the VMM itself). */
  readonly memoryOverheadMiB: number;
  /** Limit CPU time to the VM's vcpus. */
  readonly cpuLimit: boolean;
  readonly pidsMax: number;
}

const PERIOD_US = 100_000;

/** The `--cgroup` values of a VM with `vcpus` and `memoryMiB` under `limits`. */
export function jailerCgroups(
  machine: { readonly vcpus: number; readonly memoryMiB: number },
  limits: FirecrackerJailLimits,
): string[] {
  const bytes = (machine.memoryMiB + limits.memoryOverheadMiB) * 2 ** 20;
  const quota = machine.vcpus * PERIOD_US;
  if (limits.cgroupVersion === 2) {
    const out = [`memory.max=${bytes}`, `pids.max=${limits.pidsMax}`];
    if (limits.cpuLimit) out.push(`cpu.max=${quota} ${PERIOD_US}`);
    return out;
  }
  const out = [`memory.limit_in_bytes=${bytes}`, `pids.max=${limits.pidsMax}`];
  if (limits.cpuLimit) out.push(`cpu.cfs_period_us=${PERIOD_US}`, `cpu.cfs_quota_us=${quota}`);
  return out;
}

/** The jailer options of one VM (see the module comment). */
export function jailerForVm(
  base: JailerOptions,
  identity: JailIdentity,
  machine: { readonly vcpus: number; readonly memoryMiB: number },
  limits: FirecrackerJailLimits | undefined,
): JailerOptions {
  const withId = { ...base, uid: identity.uid, gid: identity.gid };
  if (limits === undefined) return withId;
  return {
    ...withId,
    cgroupVersion: limits.cgroupVersion,
    cgroups: [...(base.cgroups ?? []), ...jailerCgroups(machine, limits)],
    parentCgroup: base.parentCgroup ?? CGROUP_PARENT,
  };
}
