/**
 * `client.sandboxes`: the sandbox operations of the node's API, by id.
 * Methods that start a machine (create, connect, resume, fork) resolve
 * with {@link Sandbox} handles; the others with plain data.
 *
 * Snapshots (`snapshot`), `fork` and `metrics` answer
 * {@link NotSupportedError} on nodes that lack their routes.
 *
 * @module
 */
import { expectJson, pathOf, type ApiClient } from '../api/api-client.js';
import type {
  ForkResultWire,
  ListedSandboxWire,
  SandboxDetailWire,
  SandboxMetricWire,
  SandboxWire,
  SnapshotWire,
} from '../api/api-wire.js';
import type { RequestOptions } from '../api/http.js';
import { errorFromAnswer } from '../error-mapping.js';
import { NotFoundError, type AenvSdkError } from '../errors.js';
import { toSnapshotInfo, type SnapshotInfo } from '../snapshot/snapshot-info.js';
import { Sandbox } from './sandbox.js';
import {
  toSandboxDetail,
  toSandboxInfo,
  type SandboxDetail,
  type SandboxInfo,
} from './sandbox-info.js';

/** Deadline of calls that start or capture machines, unless the caller gives one. */
export const LONG_CALL_TIMEOUT_MS = 600_000;

/** How to create a sandbox. */
export interface CreateOptions extends RequestOptions {
  /** Time to live in ms (rounded up to seconds). @default the node's (300 s) */
  readonly timeoutMs?: number;
  readonly metadata?: Readonly<Record<string, string>>;
  /** Environment variables of every process in the sandbox. */
  readonly envs?: Readonly<Record<string, string>>;
  /** What the TTL expiry does. @default the node's (`pause`) */
  readonly onTimeout?: 'pause' | 'kill';
  /** Resume a paused sandbox when traffic arrives for it. @default false */
  readonly autoResume?: boolean;
  /** Whether the sandbox may reach the internet. @default true */
  readonly allowInternetAccess?: boolean;
  /** Egress CIDRs/addresses always allowed, and denied. */
  readonly allowOut?: readonly string[];
  readonly denyOut?: readonly string[];
  /** Require the access token on envd calls. @default true */
  readonly secure?: boolean;
  /** A retried create with the same key gets the first answer instead of a second sandbox. */
  readonly idempotencyKey?: string;
}

/** Filters of a list. */
export interface ListOptions extends RequestOptions {
  /** @default both */
  readonly state?: readonly ('running' | 'paused')[];
  readonly metadata?: Readonly<Record<string, string>>;
  /** Template id or alias. */
  readonly template?: string;
}

/** An egress policy update: absent fields take their defaults. */
export interface NetworkUpdate extends RequestOptions {
  readonly allowOut?: readonly string[];
  readonly denyOut?: readonly string[];
  readonly allowInternetAccess?: boolean;
}

/** Options of a fork. */
export interface ForkOptions extends RequestOptions {
  /** The children's time to live in ms. @default the node's */
  readonly timeoutMs?: number;
  /** The children's metadata. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** A retried fork with the same key gets the first answer instead of more children. */
  readonly idempotencyKey?: string;
}

/** One resource sample of a sandbox (bytes; CPU in percent). */
export interface SandboxMetric {
  readonly timestamp: Date;
  readonly cpuCount: number;
  readonly cpuUsedPct: number;
  readonly memUsed: number;
  readonly memTotal: number;
  readonly diskUsed: number;
  readonly diskTotal: number;
}

/** One child of a fork: a sandbox, or why it could not be made. */
export type ForkResult =
  | { readonly sandbox: Sandbox; readonly error?: undefined }
  | { readonly sandbox?: undefined; readonly error: AenvSdkError };

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

function idempotency(key: string | undefined): { headers?: Record<string, string> } {
  return key === undefined ? {} : { headers: { 'idempotency-key': key } };
}

function long(options: RequestOptions): RequestOptions {
  return { ...options, requestTimeoutMs: options.requestTimeoutMs ?? LONG_CALL_TIMEOUT_MS };
}

function createBody(options: CreateOptions): Record<string, unknown> {
  const network =
    options.allowOut === undefined && options.denyOut === undefined
      ? undefined
      : { allowOut: options.allowOut ?? [], denyOut: options.denyOut ?? [] };
  return {
    ...(options.timeoutMs === undefined ? {} : { timeout: seconds(options.timeoutMs) }),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    ...(options.envs === undefined ? {} : { envVars: options.envs }),
    ...(options.onTimeout === undefined ? {} : { autoPause: options.onTimeout === 'pause' }),
    ...(options.autoResume === undefined ? {} : { autoResume: { enabled: options.autoResume } }),
    ...(options.allowInternetAccess === undefined
      ? {}
      : { allow_internet_access: options.allowInternetAccess }),
    ...(network === undefined ? {} : { network }),
    secure: options.secure ?? true,
  };
}

/** Sandbox operations by id. */
export class Sandboxes {
  /** @internal */
  readonly api: ApiClient;

  constructor(api: ApiClient) {
    this.api = api;
  }

  /** Creates a sandbox from a template (or a snapshot id). @throws {TemplateNotFoundError} */
  async create(template = 'base', options: CreateOptions = {}): Promise<Sandbox> {
    const answer = await this.api.call({
      ...long(options),
      method: 'POST',
      path: '/v2/sandboxes',
      body: { templateID: template, ...createBody(options) },
      ...idempotency(options.idempotencyKey),
    });
    return new Sandbox(this, expectJson<SandboxWire>(answer, 'create'));
  }

  /**
   * A handle on an existing sandbox; a paused one is resumed. `timeoutMs`
   * extends its TTL (never shortens it). @throws {SandboxNotFoundError}
   */
  async connect(
    id: string,
    options: RequestOptions & { timeoutMs?: number } = {},
  ): Promise<Sandbox> {
    const answer = await this.api.call({
      ...long(options),
      method: 'POST',
      path: pathOf`/v2/sandboxes/${id}/connect`,
      body: options.timeoutMs === undefined ? {} : { timeout: seconds(options.timeoutMs) },
    });
    return new Sandbox(this, expectJson<SandboxWire>(answer, 'connect'));
  }

  /** A sandbox's details. @throws {SandboxNotFoundError} */
  async get(id: string, options: RequestOptions = {}): Promise<SandboxDetail> {
    const answer = await this.api.call({
      ...options,
      method: 'GET',
      path: pathOf`/sandboxes/${id}`,
    });
    return toSandboxDetail(expectJson<SandboxDetailWire>(answer, 'get'));
  }

  /** Every sandbox matching the filters (all pages). */
  async list(options: ListOptions = {}): Promise<SandboxInfo[]> {
    const out: SandboxInfo[] = [];
    let nextToken: string | undefined;
    do {
      const answer = await this.api.call({
        ...options,
        method: 'GET',
        path: '/v2/sandboxes',
        query: {
          state: options.state?.join(','),
          metadata: encodeMetadata(options.metadata),
          template: options.template,
          limit: 100,
          nextToken,
        },
      });
      out.push(...expectJson<ListedSandboxWire[]>(answer, 'list', true).map(toSandboxInfo));
      nextToken = answer.headers.get('x-next-token') ?? undefined;
    } while (nextToken !== undefined && nextToken !== '');
    return out;
  }

  /** Kills a sandbox (running or paused); false when there was none. */
  async kill(id: string, options: RequestOptions = {}): Promise<boolean> {
    try {
      await this.api.call({ ...long(options), method: 'DELETE', path: pathOf`/sandboxes/${id}` });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /**
   * Pauses a running sandbox: memory and disk are kept (`keepMemory: false`
   * keeps only the disk). @throws {InvalidStateError} when it is not running.
   */
  async pause(id: string, options: RequestOptions & { keepMemory?: boolean } = {}): Promise<void> {
    await this.api.call({
      ...long(options),
      method: 'POST',
      path: pathOf`/sandboxes/${id}/pause`,
      body: options.keepMemory === undefined ? {} : { memory: options.keepMemory },
    });
  }

  /** Resumes a paused sandbox. @throws {InvalidStateError} when it is not paused. */
  async resume(
    id: string,
    options: RequestOptions & { timeoutMs?: number } = {},
  ): Promise<Sandbox> {
    const answer = await this.api.call({
      ...long(options),
      method: 'POST',
      path: pathOf`/sandboxes/${id}/resume`,
      body: options.timeoutMs === undefined ? {} : { timeout: seconds(options.timeoutMs) },
    });
    return new Sandbox(this, expectJson<SandboxWire>(answer, 'resume'));
  }

  /** Sets the TTL to `timeoutMs` from now (may shorten it). */
  async setTimeout(id: string, timeoutMs: number, options: RequestOptions = {}): Promise<void> {
    await this.api.call({
      ...options,
      method: 'POST',
      path: pathOf`/sandboxes/${id}/timeout`,
      body: { timeout: seconds(timeoutMs) },
    });
  }

  /** Keeps a running sandbox alive `durationMs` more, never shortening its TTL. */
  async refresh(id: string, durationMs: number, options: RequestOptions = {}): Promise<void> {
    await this.api.call({
      ...options,
      method: 'POST',
      path: pathOf`/sandboxes/${id}/refreshes`,
      body: { duration: seconds(durationMs) },
    });
  }

  /** Replaces a running sandbox's egress policy atomically. */
  async updateNetwork(id: string, update: NetworkUpdate): Promise<void> {
    await this.api.call({
      ...update,
      method: 'PUT',
      path: pathOf`/sandboxes/${id}/network`,
      body: {
        ...(update.allowOut === undefined ? {} : { allowOut: update.allowOut }),
        ...(update.denyOut === undefined ? {} : { denyOut: update.denyOut }),
        ...(update.allowInternetAccess === undefined
          ? {}
          : { allow_internet_access: update.allowInternetAccess }),
      },
    });
  }

  /** The tail of a sandbox's VM console (kernel and init messages). */
  async logs(id: string, options: RequestOptions & { lines?: number } = {}): Promise<string> {
    const answer = await this.api.call<string | undefined>({
      ...options,
      method: 'GET',
      path: pathOf`/sandboxes/${id}/logs`,
      query: { lines: options.lines },
      accept: 'text/plain',
      feature: 'console logs',
    });
    return typeof answer.body === 'string' ? answer.body : '';
  }

  /** Captures a running sandbox (memory and disk) as a snapshot; it keeps running. */
  async snapshot(
    id: string,
    options: RequestOptions & { name?: string } = {},
  ): Promise<SnapshotInfo> {
    const answer = await this.api.call({
      ...long(options),
      method: 'POST',
      path: pathOf`/sandboxes/${id}/snapshots`,
      body: options.name === undefined ? {} : { name: options.name },
      feature: 'snapshots',
    });
    return toSnapshotInfo(expectJson<SnapshotWire>(answer, 'snapshot'));
  }

  /**
   * Makes `count` copy-on-write copies of a running sandbox (one checkpoint,
   * the children restored from it); each child succeeds or fails on its own.
   */
  async fork(id: string, count: number, options: ForkOptions = {}): Promise<ForkResult[]> {
    const answer = await this.api.call({
      ...long(options),
      method: 'POST',
      path: pathOf`/sandboxes/${id}/fork`,
      body: {
        count,
        ...(options.timeoutMs === undefined ? {} : { timeout: seconds(options.timeoutMs) }),
        ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
      },
      ...idempotency(options.idempotencyKey),
      feature: 'fork',
    });
    return expectJson<ForkResultWire[]>(answer, 'fork', true).map((r) =>
      r.sandbox !== undefined
        ? { sandbox: new Sandbox(this, r.sandbox) }
        : { error: errorFromAnswer(r.error?.code ?? 500, r.error ?? {}) },
    );
  }

  /** Resource samples of a sandbox between two times (default: all kept). */
  async metrics(
    id: string,
    options: RequestOptions & { start?: Date; end?: Date } = {},
  ): Promise<SandboxMetric[]> {
    const unix = (d: Date | undefined): number | undefined =>
      d === undefined ? undefined : Math.floor(d.getTime() / 1000);
    const answer = await this.api.call({
      ...options,
      method: 'GET',
      path: pathOf`/sandboxes/${id}/metrics`,
      query: { start: unix(options.start), end: unix(options.end) },
      feature: 'sandbox metrics',
    });
    return expectJson<SandboxMetricWire[]>(answer, 'metrics', true).map((m) => ({
      timestamp: new Date(m.timestamp),
      cpuCount: m.cpuCount,
      cpuUsedPct: m.cpuUsedPct,
      memUsed: m.memUsed,
      memTotal: m.memTotal,
      diskUsed: m.diskUsed,
      diskTotal: m.diskTotal,
    }));
  }
}

/** E2B's `metadata` query value: `k=v&k2=v2` with each part percent-encoded. */
export function encodeMetadata(
  metadata: Readonly<Record<string, string>> | undefined,
): string | undefined {
  if (metadata === undefined) return undefined;
  return Object.entries(metadata)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}
