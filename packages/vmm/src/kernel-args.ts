/**
 * The guest kernel command line: pure functions, tested beside.
 *
 * Three parts, in this order:
 * 1. the driver's tuned base (measured in runtime-lab §A): serial console,
 *    reboot instead of hanging on panic, no boot self-tests or mitigations;
 *    under TCG also the host TSC frequency, without which about one boot in
 *    ten hangs calibrating the TSC against the PIT;
 * 2. the guest init's parameters (`aenv.hostname`, `aenv.ip`, `aenv.gw`,
 *    `aenv.dns`), the contract with `@aenv/guest`'s init (docs/guest.md);
 * 3. the caller's extra arguments.
 *
 * @module
 */
import { isIP, isIPv4 } from 'node:net';
import type { GuestParams, VirtualizationMode } from './driver.js';
import { invalidSpec } from './errors.js';

/** Kernel parameter names the guest init reads. */
export const GUEST_KERNEL_PARAMS = {
  hostname: 'aenv.hostname',
  address: 'aenv.ip',
  gateway: 'aenv.gw',
  dns: 'aenv.dns',
} as const;

/** Arguments every guest gets. */
export const BASE_KERNEL_ARGS: readonly string[] = [
  'console=ttyS0',
  'panic=-1',
  'quiet',
  'mitigations=off',
  'cryptomgr.notests',
];

/** x86 `COMMAND_LINE_SIZE` minus the terminating NUL. */
const MAX_CMDLINE = 2047;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** What {@link buildKernelCmdline} combines. */
export interface KernelCmdlineOptions {
  readonly mode: VirtualizationMode;
  /** Host TSC frequency in kHz; used under TCG. */
  readonly cpuKhz?: number;
  readonly guest?: GuestParams;
  readonly extra?: readonly string[];
}

/** The TSC arguments a TCG guest needs (see the module comment). */
export function tscArgs(cpuKhz: number): string[] {
  if (!Number.isSafeInteger(cpuKhz) || cpuKhz <= 0) {
    throw invalidSpec('cpuKhz', `must be a positive integer, got ${cpuKhz}`);
  }
  return [`tsc_early_khz=${cpuKhz}`, 'tsc=reliable', 'no_timer_check'];
}

/**
 * The guest init's parameters for `params`.
 * @throws {AenvError} `INVALID_ARGUMENT` for a malformed hostname or address.
 */
export function guestKernelArgs(params: GuestParams): string[] {
  const args: string[] = [];
  if (params.hostname !== undefined) {
    if (!HOSTNAME.test(params.hostname)) {
      throw invalidSpec(
        'guest.hostname',
        `must be a DNS label, got ${JSON.stringify(params.hostname)}`,
      );
    }
    args.push(`${GUEST_KERNEL_PARAMS.hostname}=${params.hostname}`);
  }
  if (params.address !== undefined) {
    assertCidr(params.address);
    args.push(`${GUEST_KERNEL_PARAMS.address}=${params.address}`);
  }
  if (params.gateway !== undefined) {
    if (!isIPv4(params.gateway)) {
      throw invalidSpec(
        'guest.gateway',
        `must be an IPv4 address, got ${JSON.stringify(params.gateway)}`,
      );
    }
    args.push(`${GUEST_KERNEL_PARAMS.gateway}=${params.gateway}`);
  }
  if (params.dns !== undefined && params.dns.length > 0) {
    for (const server of params.dns) {
      if (isIP(server) === 0) {
        throw invalidSpec('guest.dns', `must hold IP addresses, got ${JSON.stringify(server)}`);
      }
    }
    args.push(`${GUEST_KERNEL_PARAMS.dns}=${params.dns.join(',')}`);
  }
  return args;
}

function assertCidr(value: string): void {
  const [addr, prefix, ...rest] = value.split('/');
  const bits = Number(prefix);
  const ok =
    rest.length === 0 &&
    addr !== undefined &&
    isIPv4(addr) &&
    /^\d{1,2}$/.test(prefix ?? '') &&
    bits >= 1 &&
    bits <= 32;
  if (!ok) {
    throw invalidSpec('guest.address', `must be IPv4/prefix, got ${JSON.stringify(value)}`);
  }
}

/**
 * The whole command line.
 * @throws {AenvError} `INVALID_ARGUMENT` for an argument with whitespace, a
 *   malformed guest parameter, or a line longer than the kernel accepts.
 */
export function buildKernelCmdline(options: KernelCmdlineOptions): string {
  const args = [...BASE_KERNEL_ARGS];
  // without a known frequency the guest calibrates itself (and may hang, see above)
  if (options.mode === 'tcg' && options.cpuKhz !== undefined) args.push(...tscArgs(options.cpuKhz));
  if (options.guest !== undefined) args.push(...guestKernelArgs(options.guest));
  for (const arg of options.extra ?? []) {
    if (arg === '' || /\s/.test(arg)) {
      throw invalidSpec(
        'cmdline',
        `arguments must be non-empty without whitespace, got ${JSON.stringify(arg)}`,
      );
    }
    args.push(arg);
  }
  const line = args.join(' ');
  if (line.length > MAX_CMDLINE) {
    throw invalidSpec('cmdline', `is ${line.length} bytes, the kernel accepts ${MAX_CMDLINE}`);
  }
  return line;
}
