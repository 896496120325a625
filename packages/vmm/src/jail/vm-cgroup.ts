/**
 * The cgroup of one jailed VMM: `aenv/<vm id>` with memory, CPU and pids
 * limits, under cgroup v2 (preferred, when its root lists the cpu and
 * memory controllers) or the v1 `cpu`, `memory` and `pids` hierarchies.
 *
 * Contract: {@link vmCgroupPlan} is pure (paths and values only, tested
 * beside); {@link createVmCgroup} creates the groups and writes the limits
 * or leaves nothing; the VMM joins by writing its pid into every
 * `plan.procs` file before it execs (the jail helper does it), so it is
 * limited from its first instruction; {@link removeVmCgroup} removes the
 * groups once the VMM has exited.
 *
 * @module
 */
import { mkdir, readdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';

/** Where the cgroup controllers are mounted. */
export type CgroupHost =
  { readonly version: 2; readonly root: string } | { readonly version: 1; readonly root: string };

/** The limits of one VMM. */
export interface CgroupLimits {
  /** `memory.max` / `memory.limit_in_bytes`. */
  readonly memoryBytes: number;
  /** CPU bandwidth: `vcpus` full CPUs per `periodUs`; omitted: unlimited. */
  readonly cpu?: { readonly vcpus: number; readonly periodUs: number };
  /** `pids.max`: threads and processes. */
  readonly pidsMax: number;
}

/** What to create, write and remove for one VMM. */
export interface CgroupPlan {
  /** Directories to create, parents first. */
  readonly dirs: readonly string[];
  /** `[file, value]` in order: controller enables first, then limits. */
  readonly writes: readonly (readonly [string, string])[];
  /** The `cgroup.procs` files the VMM writes its pid into. */
  readonly procs: readonly string[];
  /** The VMM's own groups, removed after it exited. */
  readonly leaves: readonly string[];
}

/** The cgroup under which every VMM group is created. */
export const CGROUP_PARENT = 'aenv';

const V1_CONTROLLERS = ['cpu', 'memory', 'pids'] as const;

/**
 * Finds the cgroup controllers under `base`: v2 when its
 * `cgroup.controllers` lists cpu and memory, else v1 when the `cpu`,
 * `memory` and `pids` hierarchies are mounted; undefined when neither.
 */
export async function detectCgroups(base = '/sys/fs/cgroup'): Promise<CgroupHost | undefined> {
  const v2 = await readFile(join(base, 'cgroup.controllers'), 'utf8').catch(() => '');
  const listed = new Set(v2.trim().split(/\s+/));
  if (listed.has('cpu') && listed.has('memory')) return { version: 2, root: base };
  const v1 = await Promise.all(
    V1_CONTROLLERS.map((c) =>
      stat(join(base, c, 'cgroup.procs')).then(
        () => true,
        () => false,
      ),
    ),
  );
  return v1.every(Boolean) ? { version: 1, root: base } : undefined;
}

/** The groups, limits and pid files of VMM `name` (see the module comment). */
export function vmCgroupPlan(host: CgroupHost, name: string, limits: CgroupLimits): CgroupPlan {
  if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith('.')) {
    throw new AenvError('INVALID_ARGUMENT', `cgroup name ${JSON.stringify(name)} is invalid`);
  }
  const mem = String(limits.memoryBytes);
  const pids = String(limits.pidsMax);
  const quota =
    limits.cpu === undefined ? undefined : Math.round(limits.cpu.vcpus * limits.cpu.periodUs);
  if (host.version === 2) {
    const parent = join(host.root, CGROUP_PARENT);
    const leaf = join(parent, name);
    const enable = '+cpu +memory +pids';
    const writes: [string, string][] = [
      [join(host.root, 'cgroup.subtree_control'), enable],
      [join(parent, 'cgroup.subtree_control'), enable],
      [join(leaf, 'memory.max'), mem],
      [join(leaf, 'pids.max'), pids],
    ];
    if (limits.cpu !== undefined)
      writes.push([join(leaf, 'cpu.max'), `${quota} ${limits.cpu.periodUs}`]);
    return { dirs: [parent, leaf], writes, procs: [join(leaf, 'cgroup.procs')], leaves: [leaf] };
  }
  const leaf = (c: string): string => join(host.root, c, CGROUP_PARENT, name);
  const writes: [string, string][] = [
    [join(leaf('memory'), 'memory.limit_in_bytes'), mem],
    [join(leaf('pids'), 'pids.max'), pids],
  ];
  if (limits.cpu !== undefined) {
    writes.push(
      [join(leaf('cpu'), 'cpu.cfs_period_us'), String(limits.cpu.periodUs)],
      [join(leaf('cpu'), 'cpu.cfs_quota_us'), String(quota)],
    );
  }
  const leaves = V1_CONTROLLERS.map(leaf);
  return {
    dirs: V1_CONTROLLERS.flatMap((c) => [join(host.root, c, CGROUP_PARENT), leaf(c)]),
    writes,
    procs: leaves.map((l) => join(l, 'cgroup.procs')),
    leaves,
  };
}

/**
 * Creates the groups and writes the limits; on failure removes what it
 * created.
 * @throws {AenvError} `VMM_JAIL_FAILED`.
 */
export async function createVmCgroup(plan: CgroupPlan): Promise<void> {
  try {
    for (const dir of plan.dirs) await mkdir(dir, { recursive: true });
    for (const [file, value] of plan.writes) await writeFile(file, value);
  } catch (err) {
    await removeVmCgroup(plan).catch(() => undefined);
    throw new AenvError(
      'VMM_JAIL_FAILED',
      `cannot set up the VMM cgroup: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * Removes the VMM's groups (the shared parent stays). A group whose last
 * process has just exited can still read busy for a moment: retried briefly.
 * @throws {AenvError} `VMM_JAIL_FAILED` when a group cannot be removed.
 */
export async function removeVmCgroup(plan: CgroupPlan): Promise<void> {
  for (const leaf of plan.leaves) {
    for (let attempt = 0; ; attempt++) {
      try {
        await rmdir(leaf);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        if (code !== 'EBUSY' || attempt >= 50) {
          throw new AenvError(
            'VMM_JAIL_FAILED',
            `cannot remove cgroup ${leaf}: ${(err as Error).message}`,
            {
              cause: err,
            },
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}

/**
 * Removes VMM groups left by a daemon that died (its VMMs died with it):
 * empty leaves under `aenv` older than `minAgeMs`, so a group another
 * daemon on this host has just created for a VMM about to join is kept. A
 * group with processes cannot be removed (`EBUSY`) and stays.
 * @returns how many groups were removed.
 */
export async function removeStaleVmCgroups(
  host: CgroupHost,
  minAgeMs = 60_000,
  parent = CGROUP_PARENT,
): Promise<number> {
  const parents =
    host.version === 2
      ? [join(host.root, parent)]
      : V1_CONTROLLERS.map((c) => join(host.root, c, parent));
  let removed = 0;
  for (const p of parents) {
    const entries = await readdir(p, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const dir = join(p, e.name);
      const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => 'x');
      const age = Date.now() - ((await stat(dir).catch(() => undefined))?.mtimeMs ?? Date.now());
      if (procs.trim() !== '' || age < minAgeMs) continue;
      if (
        await rmdir(dir).then(
          () => true,
          () => false,
        )
      )
        removed++;
    }
  }
  return removed;
}
