/**
 * What the host offers a VMM: whether KVM can run an ordinary guest, the TSC
 * frequency a TCG guest must be told, where executables are.
 *
 * KVM detection is by module, not by `/dev/kvm` alone: a host may expose
 * `/dev/kvm` from `kvm_pvm`, which only runs PVM-patched guest kernels (this
 * project's machines; runtime-lab §0: a stock kernel hangs or QEMU asserts).
 * Hardware KVM means `kvm_intel` or `kvm_amd` is present (built in or
 * loaded: both show under `/sys/module`) and `/dev/kvm` opens read-write.
 *
 * @module
 */
import { constants } from 'node:fs';
import { access, open, readFile, readdir } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

/** The verdict on KVM. */
export interface KvmProbe {
  readonly usable: boolean;
  /** One sentence saying why, for errors and `aenv server` startup output. */
  readonly reason: string;
}

/** What {@link decideKvm} looks at. */
export interface KvmFacts {
  /** Whether `/dev/kvm` opened read-write (or why not). */
  readonly device: true | string;
  /** Module names present under `/sys/module`. */
  readonly modules: readonly string[];
}

/** What the caller knows beyond the host facts. */
export interface KvmOptions {
  /** The guest kernel is a PVM guest kernel, so a PVM-only KVM can run it. */
  readonly pvmGuestKernel?: boolean;
}

/** Pure decision over {@link KvmFacts}. */
export function decideKvm(facts: KvmFacts, options: KvmOptions = {}): KvmProbe {
  if (facts.device !== true) return { usable: false, reason: `/dev/kvm: ${facts.device}` };
  const hw = ['kvm_intel', 'kvm_amd'].find((m) => facts.modules.includes(m));
  if (hw !== undefined) return { usable: true, reason: `hardware KVM (${hw})` };
  if (facts.modules.includes('kvm_pvm')) {
    if (options.pvmGuestKernel === true)
      return { usable: true, reason: 'PVM KVM (kvm_pvm) with a configured PVM guest kernel' };
    return {
      usable: false,
      reason: '/dev/kvm is PVM-only (kvm_pvm): stock guest kernels cannot run',
    };
  }
  return { usable: false, reason: 'no hardware KVM module (kvm_intel, kvm_amd) is present' };
}

/** Paths {@link probeKvm} reads; tests point them elsewhere. */
export interface KvmProbePaths {
  readonly device: string;
  readonly sysModule: string;
}

/** Probes this host. */
export async function probeKvm(
  paths: KvmProbePaths = { device: '/dev/kvm', sysModule: '/sys/module' },
  options: KvmOptions = {},
): Promise<KvmProbe> {
  let device: true | string = true;
  try {
    const fh = await open(paths.device, constants.O_RDWR);
    await fh.close();
  } catch (err) {
    device = (err as NodeJS.ErrnoException).code ?? String(err);
  }
  const modules = await readdir(paths.sysModule).catch(() => [] as string[]);
  return decideKvm({ device, modules: modules.filter((m) => m.startsWith('kvm')) }, options);
}

/**
 * The host CPU frequency in kHz from `/proc/cpuinfo` text (the first
 * `cpu MHz` line), or undefined when absent.
 */
export function parseCpuKhz(cpuinfo: string): number | undefined {
  const m = /^cpu MHz\s*:\s*([0-9.]+)/m.exec(cpuinfo);
  if (m === null) return undefined;
  const khz = Math.round(Number(m[1]) * 1000);
  return Number.isFinite(khz) && khz > 0 ? khz : undefined;
}

/** The host CPU frequency in kHz, or undefined when `/proc/cpuinfo` does not say. */
export async function hostCpuKhz(cpuinfoPath = '/proc/cpuinfo'): Promise<number | undefined> {
  return parseCpuKhz(await readFile(cpuinfoPath, 'utf8').catch(() => ''));
}

/** Resolves a command name on `PATH` (or checks an absolute path); undefined when not executable. */
export async function findExecutable(
  name: string,
  envPath = process.env.PATH ?? '',
): Promise<string | undefined> {
  const candidates = isAbsolute(name)
    ? [name]
    : envPath
        .split(delimiter)
        .filter((d) => d !== '')
        .map((d) => join(d, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next directory
    }
  }
  return undefined;
}
