/**
 * Stage `init`: the PID 1 supervisor `aenv-init`, compiled from
 * `assets/aenv-init.c` as a static binary so it runs in any image (glibc,
 * musl or none). Inputs: the source's digest, the compiler version, the
 * flags. Output: `aenv-init`.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Artifact } from '../artifact-store.js';
import { ASSETS, assetPath } from '../assets.js';
import { runCommand } from '../run-command.js';
import { artifactPath, runStage, type StageContext } from '../stage.js';

const RECIPE = 1;
const CFLAGS = ['-static', '-O2', '-s', '-Wall', '-Wextra', '-Werror'];

/** The init stage's result. */
export interface InitArtifact {
  readonly artifact: Artifact;
  /** The static `aenv-init` binary. */
  readonly binary: string;
}

/**
 * Compiles the init (see the module comment).
 * @throws {AenvError} `GUEST_TOOL_MISSING` (gcc), `GUEST_BUILD_FAILED`.
 */
export async function prepareInit(ctx: StageContext): Promise<InitArtifact> {
  const source = assetPath(ASSETS.initSource);
  const digest = createHash('sha256')
    .update(await readFile(source))
    .digest('hex');
  const gcc = (
    await runCommand('gcc', ['-dumpfullversion'], { step: 'init: compiler version' })
  ).trim();
  const inputs = { recipe: RECIPE, source: digest, gcc, cflags: CFLAGS };
  const artifact = await runStage(ctx, 'init', inputs, async (work) => {
    await runCommand('gcc', [...CFLAGS, '-o', join(work, 'aenv-init'), source], {
      step: 'init: compile',
    });
    return { files: ['aenv-init'], meta: { gcc } };
  });
  return { artifact, binary: artifactPath(artifact, 'aenv-init') };
}
