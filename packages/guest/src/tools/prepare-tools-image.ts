/**
 * Stage `tools-image`: the read-only erofs image attached to every VM as the
 * `tools` drive and mounted at `/run/aenv/tools` (layout: `guest-contract.ts`
 * TOOLS_LAYOUT): the static `aenv-init`, the relocatable node runtime, the
 * envd bundle and `aenv-tools.json` with the versions. erofs is compact and
 * read-only by construction; files are uncompressed, because decompression
 * under TCG costs more than the reads it saves.
 *
 * Inputs: the init and node-runtime artifact keys, the envd bundle digest
 * and version. Output: `tools.erofs`.
 *
 * @module
 */
import { copyFile, cp, link, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Artifact } from '../artifact-store.js';
import { TOOLS_LAYOUT } from '../guest-contract.js';
import type { InitArtifact } from '../init/prepare-init.js';
import { runCommand } from '../run-command.js';
import { artifactPath, runStage, type StageContext } from '../stage.js';
import { digestEnvdBundle, type EnvdBundle } from './envd-bundle.js';
import type { NodeRuntimeArtifact } from './node-runtime.js';

const RECIPE = 1;

/** The tools-image stage's result. */
export interface ToolsImageArtifact {
  readonly artifact: Artifact;
  readonly image: string;
  readonly envdVersion: string;
  readonly nodeVersion: string;
}

/** Hard-links (same filesystem, no copy) or else copies. */
async function place(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await link(from, to).catch(() => copyFile(from, to));
}

/**
 * Builds the tools image (see the module comment).
 * @throws {AenvError} `GUEST_ENVD_BUNDLE_INVALID`, `GUEST_TOOL_MISSING` (erofs-utils), `GUEST_BUILD_FAILED`.
 */
export async function prepareToolsImage(
  ctx: StageContext,
  init: InitArtifact,
  node: NodeRuntimeArtifact,
  envd: EnvdBundle,
): Promise<ToolsImageArtifact> {
  const bundle = await digestEnvdBundle(envd);
  const inputs = {
    recipe: RECIPE,
    init: init.artifact.key,
    node: node.artifact.key,
    envd: { version: envd.version, digest: bundle.digest },
  };
  const artifact = await runStage(ctx, 'tools-image', inputs, async (work, progress) => {
    const root = join(work, 'root');
    await place(init.binary, join(root, TOOLS_LAYOUT.init));
    for (const name of Object.keys(node.artifact.files)) {
      await place(artifactPath(node.artifact, name), join(root, name));
    }
    await cp(envd.dir, join(root, TOOLS_LAYOUT.envd), { recursive: true, dereference: true });
    const info = { envd: envd.version, node: node.version, init: init.artifact.key };
    await writeFile(join(root, TOOLS_LAYOUT.info), `${JSON.stringify(info, null, 2)}\n`);
    progress({ percent: 40, message: 'mkfs.erofs' });
    const out = join(work, 'tools.erofs');
    await runCommand('mkfs.erofs', ['--quiet', '-T0', '--all-root', out, root], {
      step: 'tools-image: mkfs.erofs',
    });
    await rm(root, { recursive: true, force: true });
    return { files: ['tools.erofs'], meta: info };
  });
  return {
    artifact,
    image: artifactPath(artifact, 'tools.erofs'),
    envdVersion: envd.version,
    nodeVersion: node.version,
  };
}
