/**
 * The environment and executable of a process, resolved the way E2B's envd
 * resolves them.
 *
 * Environment, later entries winning: envd's own `PATH`, then `HOME`, `USER`
 * and `LOGNAME` of the user, then the global variables from `/init`, then the
 * request's `envs`.
 *
 * @module
 */
import { access, constants } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { UserInfo } from '../users/user-db.js';

/** The `PATH` given to processes when envd itself has none. */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The environment of a process. */
export function processEnv(
  user: UserInfo,
  globalEnv: ReadonlyMap<string, string>,
  requestEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? DEFAULT_PATH,
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
  };
  for (const [key, value] of globalEnv) env[key] = value;
  for (const [key, value] of Object.entries(requestEnv)) env[key] = value;
  return env;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks that `cmd` names an executable (directly or through `PATH`), so a
 * missing binary (an image without bash) is a clear error rather than an
 * exec failure inside the child.
 * @throws {AenvError} `ENVD_SPAWN_FAILED`.
 */
export async function assertExecutable(
  cmd: string,
  envPath: string | undefined,
  cwd: string,
): Promise<void> {
  if (cmd === '') {
    throw new AenvError('ENVD_SPAWN_FAILED', 'no command given', { fields: { cmd } });
  }
  const candidates = cmd.includes('/')
    ? [resolve(cwd, cmd)]
    : (envPath ?? DEFAULT_PATH)
        .split(':')
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, cmd));
  for (const candidate of candidates) if (await isExecutable(candidate)) return;
  throw new AenvError(
    'ENVD_SPAWN_FAILED',
    `error starting process '${cmd}': executable not found (the image has no '${cmd}')`,
    { fields: { cmd } },
  );
}

/**
 * Checks that no part of a command line or environment holds a NUL byte
 * (the kernel cannot pass one; Node throws a TypeError that would read as
 * envd's own failure).
 * @throws {AenvError} `INVALID_ARGUMENT` naming the part.
 */
export function assertNoNulBytes(
  cmd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): void {
  const bad = (s: string): boolean => s.includes('\0');
  let where: string | undefined;
  if (bad(cmd)) where = 'process.cmd';
  else if (args.some(bad)) where = 'process.args';
  else {
    const key = Object.entries(env).find(([k, v]) => bad(k) || (v !== undefined && bad(v)))?.[0];
    if (key !== undefined) where = `the environment variable ${JSON.stringify(key)}`;
  }
  if (where !== undefined) {
    throw new AenvError('INVALID_ARGUMENT', `${where} contains a NUL byte`, { fields: { where } });
  }
}
