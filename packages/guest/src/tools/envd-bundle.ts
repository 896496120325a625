/**
 * The envd bundle that goes into the tools image: a directory with
 * `envd.mjs` (plus any files it loads), runnable as
 * `node envd.mjs --port 49983`. By default it comes from `@aenv/envd`;
 * callers may point elsewhere (tests use a named stand-in).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { AenvError } from '@aenv/shared';

/** An envd bundle to package. */
export interface EnvdBundle {
  /** Absolute directory holding `envd.mjs`. */
  readonly dir: string;
  /** Version string recorded in the tools image. */
  readonly version: string;
}

async function* files(dir: string): AsyncGenerator<string> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (e.isFile()) yield p;
  }
}

/**
 * The digest of every file's relative name and content, and the file list.
 * @throws {AenvError} `GUEST_ENVD_BUNDLE_INVALID` without `envd.mjs`.
 */
export async function digestEnvdBundle(
  bundle: EnvdBundle,
): Promise<{ digest: string; files: string[] }> {
  const entry = await stat(join(bundle.dir, 'envd.mjs')).catch(() => undefined);
  if (entry?.isFile() !== true) {
    throw new AenvError(
      'GUEST_ENVD_BUNDLE_INVALID',
      `${bundle.dir} has no envd.mjs (build @aenv/envd first)`,
      {
        fields: { dir: bundle.dir },
      },
    );
  }
  const hash = createHash('sha256');
  const names: string[] = [];
  for await (const f of files(bundle.dir)) {
    const name = relative(bundle.dir, f);
    names.push(name);
    hash
      .update(`${name}\0`)
      .update(await readFile(f))
      .update('\0');
  }
  return { digest: `sha256:${hash.digest('hex')}`, files: names };
}
