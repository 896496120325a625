/**
 * The machine a benchmark ran on: cores, CPU model, memory, kernel, OS,
 * whether VMs run with KVM or TCG (the vmm package's own probe and driver
 * choice, honouring `AENV_VMM_DRIVER`/`AENV_VMM_ACCEL` as the node does),
 * the QEMU and Firecracker versions, node's version and the load average.
 * Every results file carries it, so figures of different hosts are never
 * compared as absolute numbers.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { loadConfig } from '@aenv/shared';
import {
  IMPLEMENTED_DRIVERS,
  findExecutable,
  firecrackerVersion,
  probeKvm,
  qemuVersion,
  selectDriver,
  vmmConfigSchema,
} from '@aenv/vmm';

async function osName() {
  const text = await readFile('/etc/os-release', 'utf8').catch(() => '');
  return /^PRETTY_NAME="?([^"\n]*)"?/m.exec(text)?.[1] ?? os.type();
}

/** What the node would run VMs with here (driver, KVM or TCG, why). */
async function virtualization(vmm) {
  const [kvm, fc, qemu] = await Promise.all([
    probeKvm(undefined, { pvmGuestKernel: vmm.kvmPvm }),
    findExecutable(vmm.firecrackerBinary),
    findExecutable(vmm.qemuBinary),
  ]);
  let choice;
  try {
    choice = selectDriver({
      requested: vmm.driver,
      accel: vmm.accel,
      firecrackerFound: fc !== undefined,
      kvm,
      implemented: IMPLEMENTED_DRIVERS,
    });
  } catch (err) {
    choice = { kind: 'none', mode: 'none', reason: err instanceof Error ? err.message : `${err}` };
  }
  return {
    driver: choice.kind,
    mode: choice.mode,
    reason: choice.reason,
    kvm: kvm.reason,
    qemu: qemu === undefined ? undefined : await qemuVersion(qemu).catch(() => undefined),
    firecracker: fc === undefined ? undefined : await firecrackerVersion(fc).catch(() => undefined),
  };
}

/**
 * Describes this host.
 * @param {Record<string, string | undefined>} [env] where `AENV_VMM_*` overrides come from
 */
export async function describeMachine(env = process.env) {
  const vmm = loadConfig(vmmConfigSchema, { env });
  const virt = await virtualization(vmm);
  const cpus = os.cpus();
  const cores = os.availableParallelism?.() ?? cpus.length;
  const memoryBytes = os.totalmem();
  return {
    hostname: os.hostname(),
    cores,
    cpuModel: cpus[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown',
    memoryBytes,
    kernel: os.release(),
    os: await osName(),
    virtualization: {
      driver: virt.driver,
      mode: virt.mode,
      reason: virt.reason,
      kvm: virt.kvm,
    },
    qemu: virt.qemu,
    firecracker: virt.firecracker,
    node: process.version,
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    slug: machineSlug(virt.mode, cores, memoryBytes),
  };
}

/**
 * A short name of the machine's class for results file names, e.g.
 * `tcg-2cpu-24gib`.
 */
export function machineSlug(mode, cores, memoryBytes) {
  return `${mode}-${cores}cpu-${Math.round(memoryBytes / 2 ** 30)}gib`;
}

/** The 1-minute load average, rounded (recorded before and after each benchmark). */
export function loadNow() {
  return Math.round(os.loadavg()[0] * 100) / 100;
}
