/**
 * The command line of the VMM jail helper (`native/aenv-vmm-jail.c`):
 * pure, tested beside.
 *
 * The helper enters the network namespace, joins the cgroups, opens the
 * tap, builds a private mount namespace (hidden directories covered by an
 * empty tmpfs, the VMM's own files bound back at their paths), drops to the
 * VM's uid/gid with no capabilities and `no_new_privs`, then execs the VMM,
 * whose pid is the helper's. See that file for the order of the steps and
 * docs/vmm.md for the design.
 *
 * @module
 */
import { isAbsolute, normalize, sep } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { JailIdentity } from './jail-uid-pool.js';

/** A path the VMM needs, bound back into its mount namespace. */
export interface JailBind {
  readonly path: string;
  readonly readOnly: boolean;
}

/** Everything one jailed launch needs. */
export interface JailCommandSpec {
  /** The built helper program. */
  readonly helper: string;
  readonly identity: JailIdentity;
  /** Network namespace: a name under /run/netns or an absolute path. */
  readonly netns?: string;
  /** `cgroup.procs` files to join before exec. */
  readonly cgroupProcs: readonly string[];
  /** Directories covered by an empty tmpfs. */
  readonly hide: readonly string[];
  /** Files and directories bound back (only those under a hidden directory matter). */
  readonly binds: readonly JailBind[];
  /** A tap the helper opens and leaves on descriptor `fd`. */
  readonly tap?: { readonly name: string; readonly fd: number };
  /** SIGKILL the VMM when the daemon dies. */
  readonly killWithParent: boolean;
}

/** Whether `path` is `dir` or inside it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

function checkPath(path: string): string {
  if (!isAbsolute(path) || normalize(path) !== path) {
    throw new AenvError('VMM_JAIL_FAILED', `jail paths must be absolute and normal: ${path}`);
  }
  return path;
}

/**
 * The hidden directories, parents first, without duplicates, and the binds
 * that are under one of them, parents first; a bind inside another bind is
 * kept only when it differs in access (a read-only file in a writable
 * directory would be writable through it otherwise).
 */
export function jailMounts(
  hide: readonly string[],
  binds: readonly JailBind[],
): { hide: string[]; binds: JailBind[] } {
  const hidden = [...new Set(hide.map(checkPath))].sort();
  const sorted = [...binds].map((b) => ({ ...b, path: checkPath(b.path) }));
  sorted.sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : Number(a.readOnly) - Number(b.readOnly),
  );
  const kept: JailBind[] = [];
  for (const b of sorted) {
    if (!hidden.some((h) => isWithin(b.path, h))) continue;
    const cover = kept.findLast((k) => isWithin(b.path, k.path));
    if (cover !== undefined && (cover.readOnly || !b.readOnly)) continue;
    kept.push(b);
  }
  return { hide: hidden, binds: kept };
}

/** The helper's program and arguments that run `program args` jailed. */
export function jailCommand(
  spec: JailCommandSpec,
  program: string,
  args: readonly string[],
): [string, string[]] {
  const { identity } = spec;
  const mounts = jailMounts(spec.hide, spec.binds);
  const argv: string[] = [];
  if (spec.netns !== undefined) {
    argv.push('--netns', spec.netns.startsWith('/') ? spec.netns : `/run/netns/${spec.netns}`);
  }
  for (const procs of spec.cgroupProcs) argv.push('--cgroup', procs);
  if (spec.tap !== undefined) argv.push('--tap', `${spec.tap.name}:${spec.tap.fd}`);
  for (const dir of mounts.hide) argv.push('--hide', dir);
  for (const b of mounts.binds) argv.push(b.readOnly ? '--bind-ro' : '--bind', b.path);
  for (const g of identity.groups) argv.push('--groups', String(g));
  argv.push('--gid', String(identity.gid), '--uid', String(identity.uid));
  if (spec.killWithParent) argv.push('--pdeathsig');
  argv.push('--', program, ...args);
  return [spec.helper, argv];
}
