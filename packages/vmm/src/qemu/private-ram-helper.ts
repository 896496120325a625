/**
 * The private-RAM interposer (`native/aenv-private-ram.c`): built once per
 * source version with the host C compiler and cached, then preloaded into
 * every restored QEMU (see that file for what it does and
 * docs/snapshots.md for why).
 *
 * Contract: {@link buildPrivateRamHelper} returns the path of a shared
 * object named after the SHA-256 of its source in `dir`; an existing one is
 * reused, a new one appears by an atomic rename (concurrent builders race
 * harmlessly). The file is world-readable, so a QEMU running as another
 * user can load it. Because QEMU preloads whatever is there, `dir` and the
 * file must belong to this process's user and be writable by nobody else
 * (a directory someone else prepared in /tmp is refused, not used).
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AenvError } from '@aenv/shared';

const run = promisify(execFile);

/** The environment variable naming the file the interposer maps privately. */
export const PRIVATE_RAM_ENV = 'AENV_PRIVATE_RAM';

/** The interposer's C source, shipped with the package. */
export const PRIVATE_RAM_SOURCE = fileURLToPath(
  new URL('../../../native/aenv-private-ram.c', import.meta.url),
);

/** The environment a QEMU needs to map `ramFile` copy-on-write through the interposer. */
export function privateRamEnv(helper: string, ramFile: string): Record<string, string> {
  return { LD_PRELOAD: helper, [PRIVATE_RAM_ENV]: ramFile };
}

/**
 * Builds (or finds) the interposer in `dir`.
 * @param cc the C compiler. @default 'cc'
 * @throws {AenvError} `VMM_DRIVER_UNAVAILABLE` when it cannot be built.
 */
export function buildPrivateRamHelper(dir: string, cc = 'cc'): Promise<string> {
  return buildNativeHelper(
    dir,
    { source: PRIVATE_RAM_SOURCE, name: 'aenv-private-ram', kind: 'shared' },
    cc,
  );
}

/** A C program or shared object of this package, built on demand. */
export interface NativeHelper {
  /** The C source file. */
  readonly source: string;
  /** The built file's name, before its digest suffix. */
  readonly name: string;
  /** `shared`: a preloadable `.so` (linked with libdl); `program`: an executable. */
  readonly kind: 'shared' | 'program';
}

/**
 * Builds (or finds) `helper` in `dir`, under the same rules as the
 * interposer (see the module comment): named after its source's digest,
 * atomically renamed into place, owned by this user and writable by nobody
 * else.
 * @throws {AenvError} `VMM_DRIVER_UNAVAILABLE` when it cannot be built.
 */
export async function buildNativeHelper(
  dir: string,
  helper: NativeHelper,
  cc = 'cc',
): Promise<string> {
  const source = await readFile(helper.source);
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const suffix = helper.kind === 'shared' ? '.so' : '';
  const target = join(dir, `${helper.name}-${digest}${suffix}`);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await assertPrivate(dir, 'directory');
  const existing = await lstat(target).catch(() => undefined);
  if (existing !== undefined) {
    await assertPrivate(target, 'file');
    return target;
  }
  const tmp = `${target}.${process.pid}.tmp`;
  const flags = helper.kind === 'shared' ? ['-shared', '-fPIC', '-O2', '-Wall'] : ['-O2', '-Wall'];
  const libs = helper.kind === 'shared' ? ['-ldl'] : [];
  try {
    await run(cc, [...flags, '-o', tmp, helper.source, ...libs]);
    await chmod(tmp, 0o755);
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    const detail = (err as { stderr?: string }).stderr?.trim() ?? (err as Error).message;
    throw new AenvError(
      'VMM_DRIVER_UNAVAILABLE',
      `cannot build ${helper.name} with ${cc} (install gcc and libc6-dev): ${detail}`,
      { cause: err, fields: { dir } },
    );
  }
  return target;
}

/** Refuses a path that is a symlink, of another kind, another owner's, or group/world-writable. */
async function assertPrivate(path: string, kind: 'directory' | 'file'): Promise<void> {
  const s = await lstat(path);
  const ok =
    (kind === 'directory' ? s.isDirectory() : s.isFile()) &&
    s.uid === (process.getuid?.() ?? s.uid) &&
    (s.mode & 0o022) === 0;
  if (!ok) {
    throw new AenvError(
      'VMM_DRIVER_UNAVAILABLE',
      `${path} must be a ${kind} of this user that nobody else can write (QEMU preloads the helper from it)`,
      { fields: { path } },
    );
  }
}
