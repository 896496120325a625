/**
 * Where a Firecracker process finds its files, and how host files are
 * made visible to it. Two layouts:
 *
 * - `direct`: Firecracker runs as the caller, sees host paths as they are;
 *   its sockets and FIFOs live in the VM's run directory. Drives are passed
 *   as inherited file descriptors and named `/proc/self/fd/<n>` (drive i is
 *   fd 3+i), so every VM sees its drives at the same paths. That matters:
 *   a Firecracker snapshot records each drive's `path_on_host` and a
 *   restore reopens exactly those paths, so a restore with new drive
 *   sources works only if the paths do not name the sources.
 * - `jail`: Firecracker runs under the jailer, chrooted into
 *   `<chrootBaseDir>/<basename(firecracker)>/<id>/root` as `uid:gid`. Files
 *   are staged into the chroot: regular files are hard-linked (they must be
 *   on the same filesystem as the chroot base; read-only ones are copied
 *   otherwise), block devices are re-created with `mknod`, writable entries
 *   are chowned to the jail user (for a hard link that is the original
 *   inode). Drives sit at `/drives/<id>`, again the same path in every VM.
 *   The jailer closes inherited descriptors, hence no fds in this layout.
 *
 * A snapshot records which scheme its drive paths follow; a restore with
 * the other layout is refused.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { chown, copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';
import { invalidSpec } from '../errors.js';
import { MAX_SOCKET_PATH } from '../vm-spec.js';

const run = promisify(execFile);

/** How Firecracker is confined. */
export interface JailerOptions {
  /** The `jailer` binary (from the same Firecracker release). */
  readonly binary: string;
  /** User and group Firecracker runs as. */
  readonly uid: number;
  readonly gid: number;
  /** Base of the chroot directories. @default '/srv/jailer' */
  readonly chrootBaseDir?: string;
  /** cgroup version for `--cgroup` values. */
  readonly cgroupVersion?: 1 | 2;
  /** `--cgroup` values, `<file>=<value>`, e.g. `memory.max=2147483648`. */
  readonly cgroups?: readonly string[];
  /** `--parent-cgroup` (default: the Firecracker binary's name). */
  readonly parentCgroup?: string;
  /** `--resource-limit` values, e.g. `no-file=2048`. */
  readonly resourceLimits?: readonly string[];
}

/** A file as seen by both sides. */
export interface SharedPath {
  /** Path on the host. */
  readonly host: string;
  /** Path as the VMM opens it. */
  readonly vmm: string;
}

/** Layout of one VMM's files. */
export interface VmmLayout {
  readonly kind: 'direct' | 'jail';
  /** The API socket. */
  readonly apiSocket: SharedPath;
  /** FIFO of the human-readable log. */
  readonly logFifo: SharedPath;
  /** FIFO of the JSON metrics. */
  readonly metricsFifo: SharedPath;
  /** Host side of the vsock device. */
  readonly vsock: SharedPath;
  /** The jail, when there is one. */
  readonly jail: Jail | null;
}

/** File names in a run directory (direct layout). */
export const RUN_FILES = {
  api: 'firecracker.sock',
  log: 'firecracker.log.fifo',
  metrics: 'metrics.fifo',
  vsock: 'vsock.sock',
} as const;

/** The path under which the VMM opens drive number `index` (direct layout). */
export function fdDrivePath(index: number): string {
  return `/proc/self/fd/${3 + index}`;
}

/** The path under which a jailed VMM opens drive `id`. */
export function jailDrivePath(id: string): string {
  return `/drives/${id}`;
}

/** The direct layout for `runDir`. */
export function directLayout(runDir: string): VmmLayout {
  const same = (name: string): SharedPath => ({
    host: join(runDir, name),
    vmm: join(runDir, name),
  });
  return {
    kind: 'direct',
    apiSocket: same(RUN_FILES.api),
    logFifo: same(RUN_FILES.log),
    metricsFifo: same(RUN_FILES.metrics),
    vsock: same(RUN_FILES.vsock),
    jail: null,
  };
}

/** Jailer ids: alphanumerics and hyphens, at most 64 (jailer's rule). */
export function jailId(vmId: string): string {
  return vmId.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64);
}

/** The `jailer` arguments; Firecracker's own follow `--`. */
export function jailerArgs(
  j: JailerOptions,
  firecracker: string,
  id: string,
  netnsPath?: string,
): string[] {
  const args = ['--id', jailId(id), '--exec-file', firecracker];
  args.push('--uid', String(j.uid), '--gid', String(j.gid));
  args.push('--chroot-base-dir', j.chrootBaseDir ?? '/srv/jailer');
  if (netnsPath !== undefined) args.push('--netns', netnsPath);
  if (j.cgroupVersion !== undefined) args.push('--cgroup-version', String(j.cgroupVersion));
  for (const c of j.cgroups ?? []) args.push('--cgroup', c);
  if (j.parentCgroup !== undefined) args.push('--parent-cgroup', j.parentCgroup);
  for (const r of j.resourceLimits ?? []) args.push('--resource-limit', r);
  return args;
}

/** Major and minor number of a device number (glibc's encoding). */
export function splitDev(rdev: bigint): [number, number] {
  const major = ((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn);
  const minor = (rdev & 0xffn) | ((rdev >> 12n) & ~0xffn);
  return [Number(major), Number(minor)];
}

/** A chroot for one jailed VMM (see the module comment). */
export class Jail {
  /** `<base>/<exec name>/<id>`: removed as a whole. */
  readonly dir: string;
  /** The chroot root. */
  readonly root: string;
  readonly #options: JailerOptions;

  private constructor(options: JailerOptions, firecracker: string, id: string) {
    this.#options = options;
    this.dir = join(options.chrootBaseDir ?? '/srv/jailer', basename(firecracker), jailId(id));
    this.root = join(this.dir, 'root');
  }

  /**
   * Creates an empty chroot (an existing one of the same id is removed
   * first: ids are unique among live VMs, so it is a leftover of one that
   * is gone).
   * @throws {AenvError} `INVALID_ARGUMENT` when its API socket path would
   *   be too long for a unix socket.
   */
  static async create(options: JailerOptions, firecracker: string, id: string): Promise<Jail> {
    const jail = new Jail(options, firecracker, id);
    const socket = jail.hostPath('/run/firecracker.socket');
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
      throw invalidSpec(
        'jailer.chrootBaseDir',
        `is too long: ${socket} exceeds a unix socket path`,
      );
    }
    await rm(jail.dir, { recursive: true, force: true });
    await mkdir(jail.root, { recursive: true });
    // Firecracker binds its API socket in /run, which nothing else creates
    await jail.ownedDir('/run');
    return jail;
  }

  /** The host path of a path inside the jail. */
  hostPath(vmmPath: string): string {
    return join(this.root, vmmPath);
  }

  /** The layout of this jail. */
  layout(): VmmLayout {
    const inside = (vmm: string): SharedPath => ({ host: this.hostPath(vmm), vmm });
    return {
      kind: 'jail',
      apiSocket: inside('/run/firecracker.socket'),
      logFifo: inside(`/${RUN_FILES.log}`),
      metricsFifo: inside(`/${RUN_FILES.metrics}`),
      vsock: inside(`/${RUN_FILES.vsock}`),
      jail: this,
    };
  }

  /**
   * Makes `hostPath` visible at `vmmPath` inside the jail.
   * @throws {AenvError} `VMM_START_FAILED` when it cannot be staged.
   */
  async stage(hostPath: string, vmmPath: string, writable: boolean): Promise<void> {
    const target = this.hostPath(vmmPath);
    await mkdir(dirname(target), { recursive: true });
    await rm(target, { force: true });
    try {
      const st = await stat(hostPath, { bigint: true });
      if (st.isBlockDevice()) {
        const [major, minor] = splitDev(st.rdev);
        await run('mknod', ['-m', writable ? '0600' : '0400', target, 'b', `${major}`, `${minor}`]);
        await this.own(target);
        return;
      }
      await linkOrCopy(hostPath, target, writable);
      if (writable) await this.own(target);
    } catch (err) {
      throw new AenvError(
        'VMM_START_FAILED',
        `cannot stage ${hostPath} into the jail at ${vmmPath}: ${(err as Error).message}`,
        { cause: err, fields: { path: hostPath } },
      );
    }
  }

  /** Creates a directory inside the jail owned by the jail user. */
  async ownedDir(vmmPath: string): Promise<string> {
    const target = this.hostPath(vmmPath);
    await mkdir(target, { recursive: true });
    await this.own(target);
    return target;
  }

  /** Gives a path inside the jail to the jail user. */
  async own(hostPath: string): Promise<void> {
    await chown(hostPath, this.#options.uid, this.#options.gid);
  }

  /** Removes the jail and the cgroup the jailer made for it; idempotent. */
  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
    if ((this.#options.cgroups?.length ?? 0) > 0 && this.#options.cgroupVersion === 2) {
      const parent = this.#options.parentCgroup ?? basename(dirname(this.dir));
      await rm(join('/sys/fs/cgroup', parent, basename(this.dir)), {
        recursive: false,
        force: true,
      }).catch(() => undefined);
    }
  }
}

async function linkOrCopy(from: string, to: string, writable: boolean): Promise<void> {
  try {
    await link(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV' || writable) throw err;
    // read-only files may be copied; a writable one must be the original
    await copyFile(from, to);
  }
}

/** Moves a file out of a jail (rename, or copy across filesystems). */
export async function moveOut(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await run('cp', ['--sparse=always', from, to]);
    await rm(from, { force: true });
  }
}
