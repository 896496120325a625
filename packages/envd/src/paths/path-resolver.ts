/**
 * Turns the paths clients send into absolute paths, the way E2B's envd does,
 * and keeps them inside envd's root.
 *
 * Rules (shared/reference/e2b-protocol.md §3.3, §3.8): an empty path is the
 * default workdir when one is set, else the user's home; `~` and `~/x` expand
 * to the user's home (`~other` is refused); relative paths are relative to
 * the user's home; `..` is resolved lexically.
 *
 * The root (`--root`, `/` in a sandbox) confines every path the filesystem
 * RPCs, the `/files` routes and process working directories touch: a path
 * that leaves it, lexically or through a symlink, is refused with
 * `ENVD_PATH_OUTSIDE_ROOT`. It is a guard for running envd on a host (tests),
 * not a sandbox: processes themselves see the whole filesystem.
 *
 * @module
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { AenvError } from '@aenv/shared';
import { errnoOf } from '../errors.js';
import type { UserInfo } from '../users/user-db.js';

/** Expands `~` and makes `raw` absolute for `user` (no filesystem access). */
export function expandPath(raw: string, user: UserInfo, defaultWorkdir?: string): string {
  let path = raw === '' && defaultWorkdir !== undefined ? defaultWorkdir : raw;
  if (path.startsWith('~')) {
    if (path.length > 1 && path[1] !== '/') {
      throw new AenvError('ENVD_PATH_INVALID', `cannot expand user-specific home dir in '${raw}'`, {
        fields: { path: raw },
      });
    }
    path = join(user.home, path.slice(1));
  }
  if (path.includes('\0')) {
    throw new AenvError('ENVD_PATH_INVALID', 'path contains a NUL byte', { fields: { path: raw } });
  }
  return isAbsolute(path) ? resolve(path) : resolve(user.home, path);
}

function within(root: string, path: string): boolean {
  return root === '/' || path === root || path.startsWith(root + sep);
}

/** Resolves client paths against a user and confines them to a root. */
export class PathResolver {
  /** The confining root, absolute and free of symlinks. */
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** Creates a resolver whose root has its symlinks resolved. */
  static async create(root: string): Promise<PathResolver> {
    return new PathResolver(await realpath(resolve(root)));
  }

  /**
   * The absolute path `raw` names for `user`.
   * @throws {AenvError} `ENVD_PATH_INVALID`, `ENVD_PATH_OUTSIDE_ROOT`.
   */
  async resolve(raw: string, user: UserInfo, defaultWorkdir?: string): Promise<string> {
    const path = expandPath(raw, user, defaultWorkdir);
    await this.confine(path);
    return path;
  }

  /**
   * Checks that `path` (absolute, normalized) stays inside the root, also
   * after resolving the symlinks of the part of it that exists.
   * @throws {AenvError} `ENVD_PATH_OUTSIDE_ROOT`.
   */
  async confine(path: string): Promise<void> {
    if (this.root === '/') return;
    if (!within(this.root, path) || !within(this.root, await realPrefix(path))) {
      throw new AenvError('ENVD_PATH_OUTSIDE_ROOT', `path '${path}' is outside of envd's root`, {
        fields: { path, root: this.root },
      });
    }
  }
}

/** `path` with the symlinks of its longest existing prefix resolved. */
async function realPrefix(path: string): Promise<string> {
  const missing: string[] = [];
  for (let head = path; ; head = dirname(head)) {
    try {
      return join(await realpath(head), ...missing.reverse());
    } catch (err) {
      const errno = errnoOf(err);
      if ((errno !== 'ENOENT' && errno !== 'ENOTDIR') || head === dirname(head)) return path;
      missing.push(basename(head));
    }
  }
}
