/**
 * NBD exports as host block devices, for the firecracker driver: Firecracker
 * only opens host files and block devices, while the storage engine serves
 * disks over NBD on unix sockets. The kernel's NBD client bridges the two:
 * `nbd-client -unix <socket> /dev/nbdN -name <export>` connects an export
 * to a free `/dev/nbdN`, which Firecracker then opens like any disk.
 *
 * What a host needs: the `nbd` kernel module (`modprobe nbd nbds_max=<n>`;
 * `/sys/module/nbd` present) and the `nbd-client` program (Debian package
 * `nbd-client`). {@link probeNbd} says whether both are there;
 * {@link NbdAttacher.attach} refuses with `VMM_NOT_SUPPORTED` naming what is
 * missing.
 *
 * Device allocation: a device is free when its `/sys/block/nbdN/size` is 0
 * and it has no `pid` attribute (nothing connected). Devices this process
 * is attaching are reserved in memory, so concurrent attaches here never
 * pick the same one; another process racing for the same device makes
 * `nbd-client` fail, and the next free device is tried.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { access, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import { notSupported } from '../errors.js';
import { findExecutable } from '../host-probe.js';

const run = promisify(execFile);

/** Whether this host can attach NBD exports as block devices. */
export interface NbdProbe {
  readonly usable: boolean;
  /** One sentence: what is there, or what is missing. */
  readonly reason: string;
}

/** Options of {@link NbdAttacher}. */
export interface NbdAttacherOptions {
  /** `nbd-client` program. @default 'nbd-client' */
  readonly nbdClient?: string;
  /** Root of sysfs (tests point it at a fake tree). @default '/sys' */
  readonly sysfs?: string;
  /** Directory of the device nodes. @default '/dev' */
  readonly dev?: string;
  /** Seconds the kernel waits for an answer before failing I/O. @default 60 */
  readonly timeoutS?: number;
  /** How many devices to try before giving up. @default 8 */
  readonly attempts?: number;
}

/** An attached export. */
export interface NbdDevice {
  /** `/dev/nbdN`. */
  readonly path: string;
  /** Disconnects it; idempotent. */
  detach(): Promise<void>;
}

/** The `nbd-client` arguments that connect `source` to `device`. */
export function nbdClientArgs(
  source: { readonly socket: string; readonly export: string },
  device: string,
  options: { readonly timeoutS: number; readonly readOnly: boolean },
): string[] {
  const args = ['-unix', source.socket, device, '-name', source.export, '-block-size', '4096'];
  args.push('-timeout', String(options.timeoutS));
  if (options.readOnly) args.push('-readonly');
  return args;
}

/** Index of a `nbdN` name, or undefined. */
function nbdIndex(name: string): number | undefined {
  const m = /^nbd(\d+)$/.exec(name);
  return m === null ? undefined : Number(m[1]);
}

/**
 * The free devices under `sysfs/block`, lowest index first.
 * @param reserved device names (`nbd3`) taken by this process
 */
export async function freeNbdDevices(
  sysfs: string,
  reserved: ReadonlySet<string>,
): Promise<string[]> {
  const names = await readdir(join(sysfs, 'block')).catch(() => [] as string[]);
  const free: [number, string][] = [];
  for (const name of names) {
    const index = nbdIndex(name);
    if (index === undefined || reserved.has(name)) continue;
    const size = (
      await readFile(join(sysfs, 'block', name, 'size'), 'utf8').catch(() => '')
    ).trim();
    const busy = await access(join(sysfs, 'block', name, 'pid')).then(
      () => true,
      () => false,
    );
    if (size === '0' && !busy) free.push([index, name]);
  }
  return free.sort((a, b) => a[0] - b[0]).map(([, name]) => name);
}

/** See the module comment. */
export class NbdAttacher {
  readonly #client: string;
  readonly #sysfs: string;
  readonly #dev: string;
  readonly #timeoutS: number;
  readonly #attempts: number;
  readonly #reserved = new Set<string>();

  constructor(options: NbdAttacherOptions = {}) {
    this.#client = options.nbdClient ?? 'nbd-client';
    this.#sysfs = options.sysfs ?? '/sys';
    this.#dev = options.dev ?? '/dev';
    this.#timeoutS = options.timeoutS ?? 60;
    this.#attempts = options.attempts ?? 8;
  }

  /** Whether the kernel module and the client program are present. */
  async probe(): Promise<NbdProbe> {
    const module = await access(join(this.#sysfs, 'module', 'nbd')).then(
      () => true,
      () => false,
    );
    const client = await findExecutable(this.#client);
    if (!module && client === undefined) {
      return {
        usable: false,
        reason: 'the nbd kernel module is not loaded and nbd-client is not installed',
      };
    }
    if (!module) return { usable: false, reason: 'the nbd kernel module is not loaded' };
    if (client === undefined) return { usable: false, reason: `${this.#client} is not installed` };
    return { usable: true, reason: `nbd module and ${client}` };
  }

  /**
   * Connects an export to a free `/dev/nbdN`.
   * @throws {AenvError} `VMM_NOT_SUPPORTED` when the host lacks the module or
   *   client (the message says what to install); `VMM_DRIVE_ATTACH_FAILED`.
   */
  async attach(
    source: { readonly socket: string; readonly export: string },
    readOnly: boolean,
  ): Promise<NbdDevice> {
    const probe = await this.probe();
    if (!probe.usable) {
      throw notSupported(
        'firecracker',
        'NBD drives',
        `${probe.reason}; the host needs the nbd kernel module (modprobe nbd) and nbd-client (apt-get install nbd-client)`,
      );
    }
    const failures: string[] = [];
    const tried = new Set<string>();
    for (let i = 0; i < this.#attempts; i++) {
      const free = await freeNbdDevices(this.#sysfs, tried);
      // re-checked after the await: a concurrent attach may have reserved one meanwhile
      const name = free.find((n) => !this.#reserved.has(n));
      if (name === undefined) {
        failures.push('no free /dev/nbdN (load the module with a larger nbds_max)');
        break;
      }
      this.#reserved.add(name);
      tried.add(name);
      const device = join(this.#dev, name);
      const args = nbdClientArgs(source, device, { timeoutS: this.#timeoutS, readOnly });
      try {
        await run(this.#client, args, { timeout: 30_000 });
        return this.#attached(name, device);
      } catch (err) {
        this.#reserved.delete(name);
        failures.push(`${device}: ${stderrOf(err)}`);
      }
    }
    throw new AenvError(
      'VMM_DRIVE_ATTACH_FAILED',
      `cannot attach NBD export ${source.export} (${source.socket}): ${failures.join('; ')}`,
      { fields: { socket: source.socket, export: source.export } },
    );
  }

  #attached(name: string, device: string): NbdDevice {
    let detaching: Promise<void> | undefined;
    return {
      path: device,
      detach: () => {
        detaching ??= run(this.#client, ['-d', device], { timeout: 30_000 }).then(
          () => void this.#reserved.delete(name),
          (err: unknown) => {
            throw new AenvError(
              'VMM_DRIVE_ATTACH_FAILED',
              `cannot detach ${device}: ${stderrOf(err)}`,
              { cause: err, fields: { device } },
            );
          },
        );
        return detaching;
      },
    };
  }
}

function stderrOf(err: unknown): string {
  const e = err as Error & { stderr?: string };
  const text = e.stderr?.trim();
  return text !== undefined && text !== '' ? (text.split('\n').at(-1) ?? text) : e.message;
}
