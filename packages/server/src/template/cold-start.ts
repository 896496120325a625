/**
 * Cold start (AgentENV's `POST /sandboxes-cold`): a sandbox straight from
 * an image reference. The image is pulled and converted on a miss (cached
 * otherwise), its disk grown when `diskSizeMB` asks for more, and the
 * sandbox boots it with the image's defaults (`Env`, `WorkingDir`, a named
 * `User`): a disk-only snapshot recorded for this sandbox alone, released
 * with it. Unlike a template, nothing runs before envd answers; the image's
 * `Entrypoint`/`Cmd` are not started.
 *
 * @module
 */
import type { ImageService } from '../image/image-service.js';
import type { PullProgressListener } from '../image/image-progress.js';
import { envMap } from '../image/oci-manifest.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { CreateSandboxRequest, SandboxRecord } from '../orchestrator/sandbox.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { NodeState } from '../store/node-state.js';

/** What a cold start asks for. */
export interface ColdStartRequest {
  readonly image: string;
  readonly sandbox: Omit<CreateSandboxRequest, 'templateId'>;
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** undefined: the image's disk size. */
  readonly diskSizeMiB: number | undefined;
  readonly onProgress?: PullProgressListener | undefined;
}

/** What a cold start uses. */
export interface ColdStartDeps {
  readonly images: ImageService;
  readonly snapshots: SnapshotCatalog;
  readonly orchestrator: Orchestrator;
  readonly envdVersion: string;
}

/**
 * Pulls (on a miss) and boots an image as a new sandbox.
 * @throws {AenvError} image errors, `INVALID_ARGUMENT` (disk smaller than the image), start errors.
 */
export async function coldStart(
  deps: ColdStartDeps,
  req: ColdStartRequest,
): Promise<SandboxRecord> {
  const pulled = await deps.images.pull(
    req.image,
    req.onProgress === undefined ? {} : { onProgress: req.onProgress },
  );
  const image =
    req.diskSizeMiB === undefined
      ? pulled.image
      : await deps.images.resize(pulled.image, req.diskSizeMiB * 2 ** 20);
  const user = pulled.config.user?.split(':')[0];
  const { id } = deps.snapshots.allocate();
  const snapshot = {
    id,
    kind: 'cold' as const,
    templateId: pulled.reference,
    dir: undefined,
    image,
    vcpus: req.vcpus,
    memoryMiB: req.memoryMiB,
    diskSizeMiB: Math.round(image.virtualSize / 2 ** 20),
    envdVersion: deps.envdVersion,
    envdDefaults: {
      envVars: envMap(pulled.config.env),
      // envd runs users by name; a numeric USER falls back to envd's default.
      user: user === undefined || /^\d+$/.test(user) ? undefined : user,
      workdir: pulled.config.workingDir,
    },
    createdAt: new Date().toISOString(),
  };
  deps.snapshots.add(snapshot);
  try {
    return await deps.orchestrator.create({ ...req.sandbox, templateId: id });
  } catch (err) {
    // The sandbox never started: nothing else uses its snapshot.
    await deps.snapshots.release(id, () => false);
    throw err;
  }
}

/**
 * Releases cold-start snapshots no sandbox record names (a node killed
 * between recording one and starting its sandbox); run after recovery.
 */
export async function releaseOrphanColdSnapshots(state: NodeState): Promise<number> {
  const used = new Set(
    state.sandboxes.all().flatMap((r) => [r.sourceSnapshotId, r.pausedSnapshotId]),
  );
  let released = 0;
  for (const s of state.snapshots.list()) {
    if (s.kind !== 'cold' || used.has(s.id)) continue;
    if (await state.snapshots.release(s.id, () => false)) released++;
  }
  return released;
}
