/**
 * Resolving paths inside an image's root directory as if it were `/`:
 * symlinks met on the way are followed within the root (absolute targets
 * start again at the root, `..` stops at the root), so an entry of a
 * hostile layer can never reach a host path through a symlink an earlier
 * entry planted (`etc -> /` then `etc/passwd`).
 *
 * The daemon is the only writer of a conversion's root, so checking and
 * then acting is safe here (no other process races it).
 *
 * @module
 */
import { lstat, mkdir, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';

/** Where an entry goes: its real parent directory on the host and its name. */
export interface RootLocation {
  /** Host path of the parent directory (no symlink in it below the root). */
  readonly dir: string;
  readonly name: string;
  /** `join(dir, name)`. */
  readonly path: string;
}

/** Options of {@link resolveInRoot}. */
export interface ResolveOptions {
  /** Create missing parent directories (mode 0755, owned by the daemon's user). */
  readonly create: boolean;
  /** Also follow the final component when it is a symlink. */
  readonly followFinal?: boolean;
}

const MAX_HOPS = 40;

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

interface Walk {
  readonly pending: string[];
  readonly done: string[];
  hops: number;
}

/**
 * Resolves `rel` (a normalised relative path) inside `root`.
 * @returns the location, or undefined when a parent is missing and `create` is false.
 * @throws {AenvError} `IMAGE_INVALID` for symlink loops.
 */
export async function resolveInRoot(
  root: string,
  rel: string,
  options: ResolveOptions,
): Promise<RootLocation | undefined> {
  const walk: Walk = {
    pending: rel.split('/').filter((c) => c !== '' && c !== '.'),
    done: [],
    hops: 0,
  };
  const keep = options.followFinal === true ? 0 : 1;
  while (walk.pending.length > keep) {
    const outcome = await step(root, rel, walk, options);
    if (outcome !== 'next') return outcome;
  }
  if (walk.pending.length > 0) return at(root, walk.done, walk.pending[0] as string);
  // Everything resolved (followFinal): the path is the directory itself.
  const name = walk.done.pop();
  return name === undefined ? { dir: root, name: '', path: root } : at(root, walk.done, name);
}

/** Resolves the next component; 'next' to go on, else the final answer. */
async function step(
  root: string,
  rel: string,
  walk: Walk,
  options: ResolveOptions,
): Promise<'next' | RootLocation | undefined> {
  const c = walk.pending.shift() as string;
  if (c === '..') {
    walk.done.pop();
    return 'next';
  }
  const here = join(root, ...walk.done, c);
  const st = await lstat(here).catch((err: unknown) => {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  });
  if (st === undefined) {
    if (!options.create)
      return walk.pending.length === 0 && options.followFinal === true
        ? at(root, walk.done, c)
        : undefined;
    await mkdir(here, { mode: 0o755 });
  } else if (st.isSymbolicLink()) {
    if (++walk.hops > MAX_HOPS) {
      throw new AenvError('IMAGE_INVALID', `too many symlinks resolving '${rel}' in the image`);
    }
    const target = await readlink(here);
    if (target.startsWith('/')) walk.done.length = 0;
    walk.pending.unshift(...target.split('/').filter((t) => t !== '' && t !== '.'));
    return 'next';
  } else if (!st.isDirectory()) {
    // followFinal ending on a non-directory is fine; a non-directory parent is replaced.
    if (walk.pending.length === 0) return at(root, walk.done, c);
    if (!options.create) return undefined;
    await rm(here, { force: true });
    await mkdir(here, { mode: 0o755 });
  }
  walk.done.push(c);
  return 'next';
}

function at(root: string, dirParts: readonly string[], name: string): RootLocation {
  const dir = join(root, ...dirParts);
  return { dir, name, path: join(dir, name) };
}
