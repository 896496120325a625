/**
 * The build context `aenv build` sends when its Dockerfile copies files: a
 * tar (GNU tar, gzip) of the context directory, with the Dockerfile added
 * under a fixed name, so a `-f` outside the context works too.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { basename, dirname } from 'node:path';
import { promisify } from 'node:util';
import { CliError } from '../cli-error.js';

const run = promisify(execFile);

/** Where the Dockerfile is inside the sent context. */
export const CONTEXT_DOCKERFILE = '.aenv-build/Dockerfile';

/** The context directory and the Dockerfile as one gzipped tar. */
export async function packContext(contextDir: string, dockerfile: string): Promise<Uint8Array> {
  const args = [
    '-c',
    '-z',
    '-f',
    '-',
    '--exclude=.git',
    '-C',
    contextDir,
    '.',
    '-C',
    dirname(dockerfile),
    `--transform=s,^${basename(dockerfile).replace(/[.[\]*^$\\,]/g, '\\$&')}$,${CONTEXT_DOCKERFILE},`,
    basename(dockerfile),
  ];
  try {
    const { stdout } = await run('tar', args, { encoding: 'buffer', maxBuffer: 1 << 30 });
    return stdout;
  } catch (err) {
    throw new CliError(
      `cannot pack the build context ${contextDir}: ${(err as Error).message}`,
      'Check that tar is installed and the context is readable.',
    );
  }
}
