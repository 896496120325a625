/**
 * Running one artifact build stage through the cache, with progress:
 * `cached` when the artifact exists, else `start`, the build's own
 * `progress` events, and `done` with the duration.
 *
 * @module
 */
import type { Artifact, ArtifactStore, BuildResult } from './artifact-store.js';
import {
  stageProgress,
  type GuestStage,
  type ProgressListener,
  type StageProgress,
} from './progress.js';

/** What every stage gets. */
export interface StageContext {
  readonly store: ArtifactStore;
  readonly onProgress?: ProgressListener;
  readonly signal?: AbortSignal;
}

/** A stage's build function. */
export type StageBuild = (workDir: string, progress: StageProgress) => Promise<BuildResult>;

/** Returns the stage's artifact for `inputs`, building it when not cached. */
export async function runStage(
  ctx: StageContext,
  stage: GuestStage,
  inputs: unknown,
  build: StageBuild,
): Promise<Artifact> {
  const emit = ctx.onProgress ?? (() => undefined);
  const cached = await ctx.store.get(stage, inputs);
  if (cached !== undefined) {
    emit({ stage, status: 'cached' });
    return cached;
  }
  ctx.signal?.throwIfAborted();
  const started = performance.now();
  emit({ stage, status: 'start' });
  const { artifact } = await ctx.store.ensure(stage, inputs, (work) =>
    build(work, stageProgress(stage, ctx.onProgress)),
  );
  emit({
    stage,
    status: 'done',
    percent: 100,
    durationMs: Math.round(performance.now() - started),
  });
  return artifact;
}

/** The absolute path of one output file of an artifact. */
export function artifactPath(artifact: Artifact, name: string): string {
  const file = artifact.files[name];
  if (file === undefined)
    throw new Error(`artifact ${artifact.kind}-${artifact.key} has no file ${name}`);
  return file.path;
}
