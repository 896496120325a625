/**
 * `TemplateService`: the node's template API behind the routes.
 *
 * - E2B's flow (what `Template.build()` of the e2b SDK does): `request`
 *   (`POST /v3/templates`: a template id, new or the one of an existing
 *   name, and a build id), the files-hash upload of COPY sources, `start`
 *   (`POST /v2/templates/{id}/builds/{buildId}`: runs in the background),
 *   `status` (polled with a log offset).
 * - aenv's streamed builds (`POST /templates/pull`, `POST /templates/build`):
 *   `runNow` runs the same build and reports its logs and progress as it goes.
 *
 * Builds run at most `maxConcurrentBuilds` at a time (the others wait).
 * A template exists once its first build succeeded; until then only its
 * job does (listed with its build status). The built-in `base` cannot be
 * rebuilt through the API.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import { AenvError, newId, toAenvError } from '@aenv/shared';
import type { PullProgressListener } from '../image/image-progress.js';
import type { Logger } from '../log.js';
import { BuildJob, type BuildLogEntry } from './build-job.js';
import type { BuildFiles } from './build-files.js';
import type { BuildSpec, CopySource } from './build-spec.js';
import type { TemplateBuilder } from './template-builder.js';
import type { TemplateCatalog } from './template-catalog.js';
import type { TemplateRecord } from './template-record.js';
import { buildInfo, jobView, recordView, type TemplateView } from './template-view.js';

/** What the service needs. */
export interface TemplateServiceOptions {
  readonly builder: TemplateBuilder;
  readonly templates: TemplateCatalog;
  readonly files: BuildFiles;
  readonly maxConcurrentBuilds: number;
  readonly envdVersion: string;
  readonly defaultShape: { readonly vcpus: number; readonly memoryMiB: number };
  /** Deletes a recorded template or snapshot (the orchestrator's). */
  readonly deleteTemplate: (id: string) => Promise<void>;
  readonly logger: Logger;
}

/** What a new build asks for. */
export interface BuildRequestOptions {
  readonly name?: string | undefined;
  readonly vcpus?: number | undefined;
  readonly memoryMiB?: number | undefined;
}

/** Listeners of a streamed build. */
export interface BuildListeners {
  readonly onLog?: (e: BuildLogEntry) => void;
  readonly onProgress?: PullProgressListener;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const KEEP_FINISHED_MS = 60 * 60_000;

/** Template builds and views. */
export class TemplateService {
  readonly #o: TemplateServiceOptions;
  readonly #jobs = new Map<string, BuildJob>();
  #running = 0;
  readonly #turns: (() => void)[] = [];
  /** Builds in flight, awaited by {@link close}. */
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(options: TemplateServiceOptions) {
    this.#o = options;
  }

  /** The envd version templates report. */
  get envdVersion(): string {
    return this.#o.envdVersion;
  }

  /** Uploaded build files and contexts. */
  get files(): BuildFiles {
    return this.#o.files;
  }

  /**
   * Reserves a build (E2B's `POST /v3/templates`).
   * @throws {AenvError} `API_BODY_INVALID` (name), `TEMPLATE_PROTECTED` (`base`),
   *   `BUILD_IN_PROGRESS` (the template has an unfinished build).
   */
  request(o: BuildRequestOptions): BuildJob {
    const alias = o.name;
    if (alias !== undefined && !NAME.test(alias)) {
      throw new AenvError(
        'API_BODY_INVALID',
        `template name '${alias}' must be letters, digits, '.', '_' or '-' (tags are not supported)`,
        {
          fields: { field: 'name' },
        },
      );
    }
    const existing = alias === undefined ? undefined : this.#o.templates.find(alias);
    const pending =
      alias === undefined
        ? undefined
        : [...this.#jobs.values()].find((j) => j.alias === alias && j.finishedAt === undefined);
    const templateId = existing?.id ?? pending?.templateId ?? newId();
    if (templateId === 'base')
      throw new AenvError('TEMPLATE_PROTECTED', 'the base template is built by the node itself');
    if (
      [...this.#jobs.values()].some(
        (j) => j.templateId === templateId && j.started && j.finishedAt === undefined,
      )
    ) {
      throw new AenvError(
        'BUILD_IN_PROGRESS',
        `template ${alias ?? templateId} has a build running`,
      );
    }
    const job = new BuildJob({
      templateId,
      buildId: newId(),
      alias,
      vcpus: o.vcpus,
      memoryMiB: o.memoryMiB,
    });
    this.#jobs.set(job.buildId, job);
    // A reservation never started is forgotten after a while.
    setTimeout(() => !job.started && this.#jobs.delete(job.buildId), KEEP_FINISHED_MS).unref();
    return job;
  }

  /**
   * Starts a reserved build in the background.
   * @throws {AenvError} `BUILD_NOT_FOUND`, `BUILD_IN_PROGRESS`.
   */
  start(templateId: string, buildId: string, spec: BuildSpec): void {
    const job = this.#job(templateId, buildId);
    if (job.started)
      throw new AenvError('BUILD_IN_PROGRESS', `build ${buildId} was started already`);
    job.started = true;
    const files = (s: CopySource): Promise<string> => {
      if (s.kind === 'hash') return this.#o.files.archive(s.hash);
      throw new AenvError(
        'BUILD_STEP_INVALID',
        'COPY from a build context needs a Dockerfile build with its context',
      );
    };
    void this.#run(job, spec, files, undefined).catch(() => undefined);
  }

  /**
   * Runs a build to its end (aenv's streamed pull and build), reporting logs
   * and progress; `context` is the archive COPY steps read.
   * @throws {AenvError} the build's error (with `fields.step`).
   */
  async runNow(
    o: BuildRequestOptions & { spec: BuildSpec; context?: string | undefined },
    l: BuildListeners,
  ): Promise<TemplateRecord> {
    const job = this.request(o);
    job.started = true;
    const unfollow = l.onLog === undefined ? () => undefined : job.follow(l.onLog);
    const files = async (s: CopySource): Promise<string> => {
      if (s.kind === 'hash') return this.#o.files.archive(s.hash);
      if (o.context === undefined)
        throw new AenvError(
          'BUILD_STEP_INVALID',
          'COPY needs a build context: send the context with the Dockerfile',
        );
      return o.context;
    };
    try {
      return await this.#run(job, o.spec, files, l.onProgress);
    } finally {
      unfollow();
    }
  }

  /**
   * A build's status from log entry `offset` on.
   * @throws {AenvError} `BUILD_NOT_FOUND`.
   */
  status(templateId: string, buildId: string, offset: number): Record<string, unknown> {
    return buildInfo(this.#job(templateId, buildId), offset);
  }

  /** Every template: recorded ones, then builds that have none yet. */
  list(): TemplateView[] {
    const recorded = this.#o.templates.list();
    const ids = new Set(recorded.map((t) => t.id));
    const views = recorded.map((t) => recordView(t, this.#o.envdVersion, this.#latest(t.id)));
    const seen = new Set<string>();
    for (const job of [...this.#jobs.values()].reverse()) {
      if (ids.has(job.templateId) || seen.has(job.templateId)) continue;
      seen.add(job.templateId);
      views.push(jobView(job, this.#o.defaultShape, this.#o.envdVersion));
    }
    return views;
  }

  /**
   * One template by id or name, with its builds (E2B's `TemplateWithBuilds`).
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`.
   */
  get(idOrName: string): Record<string, unknown> {
    const view = this.list().find((v) => v.templateID === idOrName || v.aliases.includes(idOrName));
    if (view === undefined) throw notFound(idOrName);
    const builds = [...this.#jobs.values()]
      .filter((j) => j.templateId === view.templateID)
      .map((j) => ({
        buildID: j.buildId,
        status: j.status,
        cpuCount: j.vcpus ?? view.cpuCount,
        memoryMB: j.memoryMiB ?? view.memoryMB,
        createdAt: j.createdAt.toISOString(),
        updatedAt: (j.finishedAt ?? j.createdAt).toISOString(),
        ...(j.finishedAt === undefined ? {} : { finishedAt: j.finishedAt.toISOString() }),
      }));
    return { ...view, builds };
  }

  /**
   * The template a name points at.
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`.
   */
  alias(name: string): { templateID: string; public: boolean } {
    const t = this.list().find((v) => v.aliases.includes(name));
    if (t === undefined) throw notFound(name);
    return { templateID: t.templateID, public: false };
  }

  /** Deletes a template (its unfinished builds are cancelled) or a snapshot. */
  async delete(idOrName: string): Promise<void> {
    const jobs = [...this.#jobs.values()].filter(
      (j) => j.templateId === idOrName || j.alias === idOrName,
    );
    for (const j of jobs) {
      j.abort.abort(new AenvError('BUILD_FAILED', 'the template was deleted'));
      this.#jobs.delete(j.buildId);
    }
    if (this.#o.templates.find(idOrName) === undefined && jobs.length > 0) return;
    await this.#o.deleteTemplate(idOrName);
  }

  /** Where the e2b SDK uploads a COPY's files (E2B's `TemplateBuildFileUpload`). */
  async uploadLink(
    templateId: string,
    hash: string,
    baseUrl: string,
    apiKey: string,
  ): Promise<Record<string, unknown>> {
    if (await this.#o.files.has(hash)) return { present: true };
    return {
      present: false,
      url: `${baseUrl}/templates/${encodeURIComponent(templateId)}/files/${encodeURIComponent(hash)}`,
      headers: { 'X-API-Key': apiKey },
    };
  }

  /** Stores an upload. */
  upload(hash: string, body: Readable): Promise<void> {
    return this.#o.files.put(hash, body);
  }

  #latest(templateId: string): BuildJob | undefined {
    return [...this.#jobs.values()].filter((j) => j.templateId === templateId && j.started).pop();
  }

  #job(templateId: string, buildId: string): BuildJob {
    const job = this.#jobs.get(buildId);
    if (job === undefined || (job.templateId !== templateId && job.alias !== templateId)) {
      throw new AenvError('BUILD_NOT_FOUND', `template ${templateId} has no build ${buildId}`, {
        fields: { buildId },
      });
    }
    return job;
  }

  /**
   * Cancels every unfinished build and waits until their machines are gone
   * (a node closing must not leave a build machine running).
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#jobs.values()) {
      if (job.finishedAt === undefined) {
        job.abort.abort(new AenvError('BUILD_FAILED', 'the node is shutting down'));
      }
    }
    // Builds waiting for a turn get it, see the abort and end at once.
    for (const next of this.#turns.splice(0)) next();
    await Promise.allSettled([...this.#inFlight]);
  }

  #run(
    job: BuildJob,
    spec: BuildSpec,
    files: (s: CopySource) => Promise<string>,
    onProgress: PullProgressListener | undefined,
  ): Promise<TemplateRecord> {
    if (this.#closed) {
      return Promise.reject(new AenvError('BUILD_FAILED', 'the node is shutting down'));
    }
    const run = this.#runInTurn(job, spec, files, onProgress);
    this.#inFlight.add(run);
    void run.catch(() => undefined).finally(() => this.#inFlight.delete(run));
    return run;
  }

  async #runInTurn(
    job: BuildJob,
    spec: BuildSpec,
    files: (s: CopySource) => Promise<string>,
    onProgress: PullProgressListener | undefined,
  ): Promise<TemplateRecord> {
    await this.#turn(job);
    try {
      job.status = 'building';
      const record = await this.#o.builder.build({
        templateId: job.templateId,
        buildId: job.buildId,
        alias: job.alias,
        spec,
        vcpus: job.vcpus,
        memoryMiB: job.memoryMiB,
        files,
        log: (level, message, step) => job.log(level, message, step),
        onProgress,
        signal: job.abort.signal,
      });
      job.finish(undefined);
      return record;
    } catch (err) {
      const e = toAenvError(err, 'BUILD_FAILED', 'the build failed');
      job.finish(e);
      this.#o.logger.warn('template build failed', {
        'template.id': job.templateId,
        'error.code': e.code,
        step: job.failure?.step,
      });
      throw e;
    } finally {
      this.#release();
      setTimeout(() => this.#jobs.delete(job.buildId), KEEP_FINISHED_MS).unref();
    }
  }

  async #turn(job: BuildJob): Promise<void> {
    if (this.#running < this.#o.maxConcurrentBuilds) {
      this.#running++;
      return;
    }
    job.log('info', 'waiting for a free build slot');
    await new Promise<void>((resolve) => this.#turns.push(resolve));
  }

  #release(): void {
    const next = this.#turns.shift();
    if (next !== undefined) next();
    else this.#running--;
  }
}

function notFound(id: string): AenvError {
  return new AenvError('TEMPLATE_NOT_FOUND', `template '${id}' not found`, {
    fields: { templateId: id },
  });
}
