/**
 * Stage `node-runtime`: the host's node binary (stripped) with its shared
 * libraries and dynamic loader, laid out to run from any directory through
 * the loader (runtime-lab §G):
 * `node/lib/ld-linux-x86-64.so.2 --library-path node/lib node/bin/node`.
 * Nothing of the guest image's own libc is used, so it runs in glibc, musl
 * or library-less images alike. (Under the loader `process.execPath` is the
 * loader; code that re-spawns node must use the same three-part command.)
 *
 * Inputs: the binary's path, size, mtime and version, and each library's
 * path, size and mtime. The result is checked by running it on the host.
 *
 * @module
 */
import { copyFile, mkdir, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { Artifact } from '../artifact-store.js';
import { runCommand } from '../run-command.js';
import { runStage, type StageContext } from '../stage.js';

const RECIPE = 1;
/** The loader's name inside `node/lib`. */
export const LOADER_NAME = 'ld-linux-x86-64.so.2';

/** Libraries and loader of a dynamically linked binary. */
export interface LddResult {
  readonly libs: readonly { readonly name: string; readonly path: string }[];
  readonly loader: string;
}

/** Parses `ldd` output (pure). */
export function parseLdd(output: string): LddResult {
  const libs: { name: string; path: string }[] = [];
  let loader: string | undefined;
  for (const line of output.split('\n')) {
    const resolved = /^\s*(\S+)\s+=>\s+(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (resolved !== null) {
      libs.push({ name: resolved[1] as string, path: resolved[2] as string });
      continue;
    }
    const direct = /^\s*(\/\S*ld-linux\S*)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (direct !== null) loader = direct[1];
    if (/not found/.test(line)) throw new Error(`ldd: ${line.trim()}`);
  }
  if (loader === undefined) throw new Error('ldd shows no dynamic loader (is the binary static?)');
  return { libs, loader };
}

/** The node-runtime stage's result. */
export interface NodeRuntimeArtifact {
  readonly artifact: Artifact;
  /** The directory holding `node/bin/node` and `node/lib/`. */
  readonly root: string;
  readonly version: string;
}

async function fileId(path: string): Promise<{ path: string; size: number; mtimeMs: number }> {
  const real = await realpath(path);
  const s = await stat(real);
  return { path: real, size: s.size, mtimeMs: Math.round(s.mtimeMs) };
}

/**
 * Prepares the relocatable node runtime (see the module comment).
 * @param nodeBinary the node to package (default: the one running this code)
 * @throws {AenvError} `GUEST_TOOL_MISSING` (binutils), `GUEST_BUILD_FAILED`.
 */
export async function prepareNodeRuntime(
  ctx: StageContext,
  nodeBinary = process.execPath,
): Promise<NodeRuntimeArtifact> {
  const step = 'node-runtime';
  const node = await fileId(nodeBinary);
  const version = (await runCommand(node.path, ['--version'], { step })).trim();
  let ldd: LddResult;
  try {
    ldd = parseLdd(await runCommand('ldd', [node.path], { step }));
  } catch (err) {
    if (err instanceof AenvError) throw err;
    throw new AenvError('GUEST_BUILD_FAILED', `${step}: ${(err as Error).message}`, { cause: err });
  }
  const libs = await Promise.all([...ldd.libs.map((l) => l.path), ldd.loader].map(fileId));
  const inputs = { recipe: RECIPE, node, version, libs };
  const artifact = await runStage(ctx, 'node-runtime', inputs, async (work, progress) => {
    await mkdir(join(work, 'node/bin'), { recursive: true });
    await mkdir(join(work, 'node/lib'));
    progress({ percent: 10, message: `stripping ${node.path}` });
    await runCommand('strip', ['-o', join(work, 'node/bin/node'), node.path], {
      step: `${step}: strip`,
    });
    const files = ['node/bin/node'];
    for (const lib of ldd.libs) {
      await copyFile(lib.path, join(work, 'node/lib', basename(lib.name)));
      files.push(`node/lib/${basename(lib.name)}`);
    }
    await copyFile(ldd.loader, join(work, 'node/lib', LOADER_NAME));
    files.push(`node/lib/${LOADER_NAME}`);
    progress({ percent: 90, message: 'checking the relocated runtime' });
    const loader = join(work, 'node/lib', LOADER_NAME);
    const args = [
      '--library-path',
      join(work, 'node/lib'),
      join(work, 'node/bin/node'),
      '--version',
    ];
    const got = (await runCommand(loader, args, { step: `${step}: check`, env: {} })).trim();
    if (got !== version)
      throw new AenvError(
        'GUEST_BUILD_FAILED',
        `${step}: relocated node says ${got}, expected ${version}`,
      );
    return { files, meta: { version } };
  });
  return { artifact, root: artifact.dir, version };
}
