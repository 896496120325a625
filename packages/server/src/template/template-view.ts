/**
 * Templates in E2B's API shapes: `Template` (lists), `TemplateWithBuilds`
 * (one template), `TemplateBuildInfo` (build status with log entries), for
 * recorded templates and for builds that have not produced one yet.
 *
 * @module
 */
import type { BuildJob } from './build-job.js';
import type { TemplateRecord } from './template-record.js';

/** E2B's `Template`. */
export interface TemplateView {
  readonly templateID: string;
  readonly buildID: string;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskSizeMB: number;
  readonly public: boolean;
  readonly aliases: string[];
  readonly names: string[];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly createdBy: null;
  readonly lastSpawnedAt: null;
  readonly spawnCount: number;
  readonly buildCount: number;
  readonly envdVersion: string;
  readonly buildStatus: string;
}

/** A recorded template, with the state of a newer build if one runs or failed. */
export function recordView(
  t: TemplateRecord,
  envdVersion: string,
  job: BuildJob | undefined,
): TemplateView {
  const names = t.alias === undefined ? [] : [t.alias];
  const pending = job !== undefined && job.status !== 'ready';
  return {
    templateID: t.id,
    buildID: t.buildId ?? t.snapshotId,
    cpuCount: t.vcpus,
    memoryMB: t.memoryMiB,
    diskSizeMB: t.diskSizeMiB,
    public: false,
    aliases: names,
    names,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt ?? t.createdAt,
    createdBy: null,
    lastSpawnedAt: null,
    spawnCount: 0,
    buildCount: 1,
    envdVersion,
    buildStatus: pending ? job.status : 'ready',
  };
}

/** A template that exists only as a build so far. */
export function jobView(
  job: BuildJob,
  defaults: { vcpus: number; memoryMiB: number },
  envdVersion: string,
): TemplateView {
  const names = job.alias === undefined ? [] : [job.alias];
  const at = job.createdAt.toISOString();
  return {
    templateID: job.templateId,
    buildID: job.buildId,
    cpuCount: job.vcpus ?? defaults.vcpus,
    memoryMB: job.memoryMiB ?? defaults.memoryMiB,
    diskSizeMB: 0,
    public: false,
    aliases: names,
    names,
    createdAt: at,
    updatedAt: (job.finishedAt ?? job.createdAt).toISOString(),
    createdBy: null,
    lastSpawnedAt: null,
    spawnCount: 0,
    buildCount: 0,
    envdVersion,
    buildStatus: job.status,
  };
}

/** E2B's `TemplateBuildInfo` from `offset` on. */
export function buildInfo(job: BuildJob, offset: number): Record<string, unknown> {
  const entries = job.entries(offset);
  return {
    templateID: job.templateId,
    buildID: job.buildId,
    status: job.status,
    logEntries: entries,
    logs: entries.map((e) => `${e.timestamp} ${e.message}`),
    ...(job.failure === undefined
      ? {}
      : {
          reason: {
            message: job.failure.message,
            ...(job.failure.step === undefined ? {} : { step: job.failure.step }),
            logEntries: [],
          },
        }),
  };
}
