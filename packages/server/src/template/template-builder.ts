/**
 * `TemplateBuilder`: one template build, start to end. A template is a
 * snapshot with a name, so a build is: start a machine (boot the image's
 * disk, or restore the base template's snapshot), wait for envd, `/init` it
 * with the image's defaults, run the steps, `/init` the final defaults,
 * start the start command and wait for the ready command, then suspend the
 * machine into a snapshot (memory included: the started process runs in
 * every sandbox restored from it) and record snapshot and template.
 *
 * A failure stops the machine and records nothing; the error carries the
 * failing step in `fields.step` (`base` for the image and machine, the
 * 1-based step number, `finalize` for start, ready and snapshot), which is
 * what E2B's build status reports.
 *
 * @module
 */
import { rm } from 'node:fs/promises';
import { DEFAULT_EGRESS_POLICY } from '@aenv/network';
import { AenvError, Cleanup, LOG_FIELDS, toAenvError } from '@aenv/shared';
import type { ImageSpec } from '@aenv/storage';
import type { ImageService } from '../image/image-service.js';
import { describePullProgress, type PullProgressListener } from '../image/image-progress.js';
import { envMap, type ImageConfig } from '../image/oci-manifest.js';
import type { Logger } from '../log.js';
import type { EnvdDefaults } from '../orchestrator/envd-client.js';
import { ENVD_PORT, initEnvd, waitForEnvd } from '../orchestrator/envd-client.js';
import type { LaunchSource, SandboxLauncher } from '../orchestrator/launcher.js';
import { sourceOf } from '../orchestrator/sandbox-helpers.js';
import type { GuestAddress } from '../orchestrator/sandbox.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import { describeStep, type BuildSpec, type CopySource } from './build-spec.js';
import type { GuestNode } from './copy-step.js';
import { StepRunner, type BuildDefaults, type BuildLogLevel } from './step-runner.js';
import type { TemplateCatalog } from './template-catalog.js';
import type { TemplateRecord } from './template-record.js';

/** What the builder runs on. */
export interface TemplateBuilderOptions {
  readonly launcher: SandboxLauncher;
  readonly templates: TemplateCatalog;
  readonly snapshots: SnapshotCatalog;
  readonly images: ImageService;
  /** Runs JavaScript in a machine (the tools image's node). */
  readonly guestNode: GuestNode;
  readonly envdVersion: string;
  readonly envdReadyTimeoutMs: number;
  readonly readyTimeoutMs: number;
  readonly stepTimeoutMs: number;
  /** Machine shape when neither the request nor the base template gives one. */
  readonly defaultShape: { readonly vcpus: number; readonly memoryMiB: number };
  /** Deletes a replaced snapshot once nothing uses it. */
  readonly releaseSnapshot: (id: string) => Promise<void>;
  readonly logger: Logger;
}

/** One build to run. */
export interface BuildRequest {
  readonly templateId: string;
  readonly buildId: string;
  readonly alias: string | undefined;
  readonly spec: BuildSpec;
  readonly vcpus?: number | undefined;
  readonly memoryMiB?: number | undefined;
  /** The archive of COPY steps' files. */
  readonly files: (source: CopySource) => Promise<string>;
  readonly log: (level: BuildLogLevel, message: string, step?: string) => void;
  readonly onProgress?: PullProgressListener | undefined;
  readonly signal?: AbortSignal | undefined;
}

interface Base {
  readonly source: LaunchSource;
  readonly defaults: BuildDefaults;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskSizeMiB: number;
  readonly token: string | undefined;
  readonly from: string;
  /** The image's `User`, adopted as the first thing the build does. */
  readonly imageUser: string | undefined;
}

/** Tags an error with the build step it happened in. */
function atStep(err: unknown, step: string, fallback: string): AenvError {
  const e = toAenvError(err, 'BUILD_FAILED', fallback);
  if (e.fields.step !== undefined) return e;
  return new AenvError(e.code, e.message, { cause: e.cause ?? err, fields: { ...e.fields, step } });
}

/** Runs template builds. */
export class TemplateBuilder {
  readonly #o: TemplateBuilderOptions;

  constructor(options: TemplateBuilderOptions) {
    this.#o = options;
  }

  /**
   * Builds a template and records it (replacing an older build of it).
   * @throws {AenvError} with `fields.step`: image errors, `BUILD_STEP_FAILED`,
   *   `BUILD_READY_TIMEOUT`, `BUILD_FAILED`, `TEMPLATE_NOT_FOUND`.
   */
  async build(req: BuildRequest): Promise<TemplateRecord> {
    const t0 = performance.now();
    req.signal?.throwIfAborted();
    const base = await this.#base(req).catch((err: unknown) => {
      throw atStep(err, 'base', 'preparing the build base failed');
    });
    await using cleanup = new Cleanup();
    const machine = await this.#o.launcher
      .launch(
        {
          sandboxId: `build-${req.buildId}`,
          vcpus: base.vcpus,
          memoryMiB: base.memoryMiB,
          egress: DEFAULT_EGRESS_POLICY,
          source: base.source,
        },
        req.signal ?? AbortSignal.timeout(10 * 60_000),
      )
      .catch((err: unknown) => {
        throw atStep(err, 'base', 'the build machine did not start');
      });
    cleanup.add('stop build machine', () => machine.stop());
    const envd = machine.address(ENVD_PORT);
    const runner = new StepRunner(
      {
        envd,
        node: this.#o.guestNode,
        stepTimeoutMs: this.#o.stepTimeoutMs,
        files: req.files,
        log: (level, message) => req.log(level, message),
      },
      base.defaults,
    );
    const signal = req.signal;
    await abortable(this.#prepare(envd, base, runner), signal).catch((err: unknown) => {
      throw atStep(err, 'base', 'the build machine did not answer');
    });
    await abortable(this.#steps(req, runner), signal);
    const defaults = runner.defaults();
    await abortable(this.#finalize(req, envd, runner, defaults), signal).catch((err: unknown) => {
      throw atStep(err, 'finalize', 'starting the template failed');
    });
    req.signal?.throwIfAborted();
    req.log('info', 'saving the snapshot', 'finalize');
    const { id, dir } = this.#o.snapshots.allocate();
    cleanup.add('remove snapshot directory', () => rm(dir, { recursive: true, force: true }));
    const saved = await machine.suspend({ dir, keepMemory: true }).catch((err: unknown) => {
      throw atStep(err, 'finalize', 'saving the template snapshot failed');
    });
    const record = this.#record(req, base, { id, dir: saved.dir, image: saved.image }, defaults);
    cleanup.move();
    const ms = performance.now() - t0;
    this.#o.logger.info('template built', {
      [LOG_FIELDS.templateId]: req.templateId,
      [LOG_FIELDS.snapshotId]: id,
      [LOG_FIELDS.durationMs]: Math.round(ms),
    });
    return record;
  }

  async #base(req: BuildRequest): Promise<Base> {
    const from = req.spec.from;
    if ('image' in from) {
      req.log('info', `pulling ${from.image}`, 'base');
      const pulled = await this.#o.images.pull(from.image, {
        ...(req.signal === undefined ? {} : { signal: req.signal }),
        onProgress: (e) => {
          if (e.status !== 'progress') req.log('info', describePullProgress(e), 'base');
          req.onProgress?.(e);
        },
      });
      return {
        source: { kind: 'boot', image: pulled.image },
        defaults: imageDefaults(pulled.config),
        vcpus: req.vcpus ?? this.#o.defaultShape.vcpus,
        memoryMiB: req.memoryMiB ?? this.#o.defaultShape.memoryMiB,
        diskSizeMiB: mib(pulled.image),
        token: undefined,
        from: `image ${pulled.reference}@${pulled.manifestDigest}`,
        imageUser: pulled.config.user,
      };
    }
    const template = this.#o.templates.resolve(from.template);
    const snapshot = this.#o.snapshots.get(template.snapshotId);
    if (req.memoryMiB !== undefined && req.memoryMiB !== snapshot.memoryMiB) {
      req.log(
        'warn',
        `memoryMB ${req.memoryMiB} ignored: a build from a template restores its ${snapshot.memoryMiB} MiB`,
        'base',
      );
    }
    return {
      source: sourceOf(snapshot),
      defaults: snapshotDefaults(snapshot),
      vcpus: snapshot.vcpus,
      memoryMiB: snapshot.memoryMiB,
      diskSizeMiB: snapshot.diskSizeMiB,
      token: snapshot.envdAccessToken,
      from: `template ${template.id}`,
      imageUser: undefined,
    };
  }

  async #prepare(envd: GuestAddress, base: Base, runner: StepRunner): Promise<void> {
    await waitForEnvd(envd, this.#o.envdReadyTimeoutMs);
    await initEnvd(envd, { envVars: base.defaults.envVars, currentToken: base.token });
    if (base.imageUser !== undefined) await runner.run({ kind: 'USER', user: base.imageUser });
  }

  async #steps(req: BuildRequest, runner: StepRunner): Promise<void> {
    const steps = req.spec.steps;
    for (let i = 0; i < steps.length; i++) {
      req.signal?.throwIfAborted();
      const step = steps[i] as (typeof steps)[number];
      const label = String(i + 1);
      req.log('info', `Step ${i + 1}/${steps.length}: ${describeStep(step)}`, label);
      await runner.run(step).catch((err: unknown) => {
        const e = toAenvError(err, 'BUILD_FAILED', 'failed');
        const message = `step ${i + 1} (${describeStep(step)}): ${e.message}`;
        throw new AenvError(e.code, message, { cause: err, fields: { ...e.fields, step: label } });
      });
    }
  }

  async #finalize(
    req: BuildRequest,
    envd: GuestAddress,
    runner: StepRunner,
    d: BuildDefaults,
  ): Promise<void> {
    await initEnvd(envd, { envVars: d.envVars, defaultUser: d.user, defaultWorkdir: d.workdir });
    const { startCmd } = req.spec;
    // E2B's default when only a start command is given.
    const readyCmd = req.spec.readyCmd ?? (startCmd === undefined ? undefined : 'sleep 20');
    if (startCmd === undefined && readyCmd === undefined) return;
    let started;
    if (startCmd !== undefined) {
      req.log('info', `starting: ${startCmd}`, 'finalize');
      started = await runner.start(startCmd);
    }
    try {
      if (readyCmd !== undefined) {
        req.log('info', `waiting for: ${readyCmd}`, 'finalize');
        await runner.waitReady(readyCmd, this.#o.readyTimeoutMs, started);
      }
    } finally {
      started?.detach();
    }
  }

  #record(
    req: BuildRequest,
    base: Base,
    saved: { id: string; dir: string | undefined; image: ImageSpec },
    d: BuildDefaults,
  ): TemplateRecord {
    const now = new Date().toISOString();
    const envdDefaults: EnvdDefaults = { envVars: d.envVars, user: d.user, workdir: d.workdir };
    const snapshot: SnapshotRecord = {
      id: saved.id,
      kind: 'template',
      templateId: req.templateId,
      dir: saved.dir,
      image: saved.image,
      vcpus: base.vcpus,
      memoryMiB: base.memoryMiB,
      diskSizeMiB: base.diskSizeMiB,
      envdVersion: this.#o.envdVersion,
      envdDefaults,
      createdAt: now,
    };
    this.#o.snapshots.add(snapshot);
    const previous = this.#o.templates.find(req.templateId);
    const record: TemplateRecord = {
      id: req.templateId,
      alias: req.alias ?? previous?.alias,
      snapshotId: saved.id,
      vcpus: base.vcpus,
      memoryMiB: base.memoryMiB,
      diskSizeMiB: base.diskSizeMiB,
      buildKey: `build:${req.buildId}`,
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
      buildId: req.buildId,
      from: base.from,
    };
    this.#o.templates.put(record);
    if (previous !== undefined && previous.snapshotId !== saved.id) {
      void this.#o.releaseSnapshot(previous.snapshotId).catch(() => undefined);
    }
    return record;
  }
}

/**
 * `work`, or the abort's reason as soon as `signal` aborts: waits on envd
 * (its ready timeout, a step's timeout) must not hold a cancelled build's
 * machine; stopping the machine then ends what `work` still waits on.
 */
function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  work.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function mib(image: ImageSpec): number {
  return Math.round(image.virtualSize / 2 ** 20);
}

/** The defaults an image's config gives (its `User` is adopted by the build). */
export function imageDefaults(config: ImageConfig): BuildDefaults {
  return { envVars: envMap(config.env), user: 'root', workdir: config.workingDir };
}

function snapshotDefaults(s: SnapshotRecord): BuildDefaults {
  const d = s.envdDefaults;
  return { envVars: { ...d?.envVars }, user: d?.user, workdir: d?.workdir };
}

/** @internal for tests: the error of a failed build names its step. */
export function stepOf(err: unknown): string | undefined {
  if (!(err instanceof AenvError)) return undefined;
  const s = err.fields.step;
  return s === undefined || s === null ? undefined : String(s);
}
