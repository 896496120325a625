/**
 * `client.templates`: the node's templates, and making new ones from OCI
 * images (`pull`) or Dockerfiles (`build`, `buildContext` with COPY
 * sources), with progress (layer downloads and conversions, build log
 * lines). Nodes without these routes answer {@link NotSupportedError}.
 *
 * @module
 */
import { expectJson, pathOf, type ApiCall, type ApiClient } from '../api/api-client.js';
import type { TemplateWire } from '../api/api-wire.js';
import type { RequestOptions } from '../api/http.js';
import { NotFoundError, NotSupportedError } from '../errors.js';
import { LONG_CALL_TIMEOUT_MS } from '../sandbox/sandboxes.js';
import { readProgressAnswer, type ProgressEvent } from './progress-stream.js';

/** A template. */
export interface TemplateInfo {
  readonly templateId: string;
  /** Names it can be created by. */
  readonly aliases: readonly string[];
  readonly cpuCount: number | undefined;
  readonly memoryMB: number | undefined;
  readonly diskSizeMB: number | undefined;
  readonly createdAt: Date | undefined;
}

/** Options of long template operations. */
export interface TemplateJobOptions extends RequestOptions {
  /** The template's name (a template of that name is rebuilt). */
  readonly name?: string;
  /** Called with each progress report. */
  readonly onProgress?: (event: ProgressEvent) => void;
  /** vCPUs of the template's sandboxes (default: the node's). */
  readonly cpuCount?: number;
  /** Memory of the template's sandboxes, MiB (default: the node's). */
  readonly memoryMB?: number;
}

/** Options of {@link Templates.pull}. */
export interface PullOptions extends TemplateJobOptions {
  /** Started in the template before its snapshot, so it runs in every sandbox. */
  readonly startCmd?: string;
  /** Retried until it succeeds before the snapshot (default with a start command: `sleep 20`). */
  readonly readyCmd?: string;
}

/** Options of {@link Templates.buildContext}. */
export interface BuildContextOptions extends TemplateJobOptions {
  /** Path of the Dockerfile inside the context. @default 'Dockerfile' */
  readonly dockerfile?: string;
}

/** A JSON job body: `fields` plus the name and machine shape that are set. */
function shape(fields: Record<string, unknown>, o: TemplateJobOptions): Record<string, unknown> {
  const all: Record<string, unknown> = {
    ...fields,
    name: o.name,
    cpuCount: o.cpuCount,
    memoryMB: o.memoryMB,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
}

function toTemplateInfo(w: TemplateWire): TemplateInfo {
  return {
    templateId: w.templateID,
    aliases: w.aliases ?? w.names ?? [],
    cpuCount: w.cpuCount,
    memoryMB: w.memoryMB,
    diskSizeMB: w.diskSizeMB,
    createdAt: w.createdAt === undefined ? undefined : new Date(w.createdAt),
  };
}

/** Template operations. */
export class Templates {
  readonly #api: ApiClient;

  constructor(api: ApiClient) {
    this.#api = api;
  }

  /** Every template of the node. */
  async list(options: RequestOptions = {}): Promise<TemplateInfo[]> {
    const answer = await this.#api.call({
      ...options,
      method: 'GET',
      path: '/templates',
      feature: 'listing templates',
    });
    return expectJson<TemplateWire[]>(answer, 'list templates', true).map(toTemplateInfo);
  }

  /** Deletes a template; false when there was none. */
  async delete(id: string, options: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#api.call({
        ...options,
        method: 'DELETE',
        path: pathOf`/templates/${id}`,
        feature: 'deleting templates',
      });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError && !(err instanceof NotSupportedError)) return false;
      throw err;
    }
  }

  /** Makes a template from an OCI image (`docker.io/library/python:3.12`). */
  pull(image: string, options: PullOptions = {}): Promise<TemplateInfo> {
    const body = { image, startCmd: options.startCmd, readyCmd: options.readyCmd };
    return this.#job('/templates/pull', { body: shape(body, options) }, 'pulling images', options);
  }

  /** Builds a template from a Dockerfile's text (COPY and ADD need {@link buildContext}). */
  build(dockerfile: string, options: TemplateJobOptions = {}): Promise<TemplateInfo> {
    const body = shape({ dockerfile }, options);
    return this.#job('/templates/build', { body }, 'template builds', options);
  }

  /**
   * Builds a template from a build context: a tar (gzip or zstd allowed)
   * holding the Dockerfile and the files its COPY and ADD name.
   */
  buildContext(context: Uint8Array, options: BuildContextOptions = {}): Promise<TemplateInfo> {
    const query = {
      dockerfile: options.dockerfile ?? 'Dockerfile',
      name: options.name,
      cpuCount: options.cpuCount,
      memoryMB: options.memoryMB,
    };
    const rawBody = { data: context, contentType: 'application/x-tar' };
    return this.#job('/templates/build', { rawBody, query }, 'template builds', options);
  }

  async #job(
    path: string,
    payload: Pick<ApiCall, 'body' | 'rawBody' | 'query'>,
    feature: string,
    options: TemplateJobOptions,
  ): Promise<TemplateInfo> {
    const res = await this.#api.open({
      ...options,
      requestTimeoutMs: options.requestTimeoutMs ?? LONG_CALL_TIMEOUT_MS,
      method: 'POST',
      path,
      ...payload,
      accept: 'application/x-ndjson, application/json',
      feature,
    });
    const result = await readProgressAnswer(res, options.onProgress, { feature });
    const template = (result as { template?: TemplateWire }).template ?? (result as TemplateWire);
    return toTemplateInfo(
      expectJson<TemplateWire>({ status: 200, headers: res.headers, body: template }, feature),
    );
  }
}
