/**
 * `client.templates`: the node's templates, and making new ones from OCI
 * images (`pull`) or Dockerfiles (`build`). Only the `base` template exists
 * until aenv's image work lands: these routes answer
 * {@link NotSupportedError} on nodes without them.
 *
 * @module
 */
import { expectJson, pathOf, type ApiClient } from '../api/api-client.js';
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
  /** The template's name. */
  readonly name?: string;
  /** Called with each progress report. */
  readonly onProgress?: (event: ProgressEvent) => void;
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
  pull(image: string, options: TemplateJobOptions = {}): Promise<TemplateInfo> {
    return this.#job('/templates/pull', { image }, 'pulling images', options);
  }

  /** Builds a template from a Dockerfile's text. */
  build(dockerfile: string, options: TemplateJobOptions = {}): Promise<TemplateInfo> {
    return this.#job('/templates/build', { dockerfile }, 'template builds', options);
  }

  async #job(
    path: string,
    body: Record<string, unknown>,
    feature: string,
    options: TemplateJobOptions,
  ): Promise<TemplateInfo> {
    const res = await this.#api.open({
      ...options,
      requestTimeoutMs: options.requestTimeoutMs ?? LONG_CALL_TIMEOUT_MS,
      method: 'POST',
      path,
      body: { ...body, ...(options.name === undefined ? {} : { name: options.name }) },
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
