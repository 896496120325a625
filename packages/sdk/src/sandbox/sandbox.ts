/**
 * A handle on one sandbox: its envd (`commands`, `files`, `pty`) and its
 * lifecycle (`pause`, `resume`, `snapshot`, `fork`, `setTimeout`, `kill`).
 * `await using sbx = await client.sandboxes.create()` kills it at the end
 * of the scope.
 *
 * @module
 */
import type { SandboxWire } from '../api/api-wire.js';
import { readAnswerBody, send, type RequestOptions } from '../api/http.js';
import { errorFromAnswer } from '../error-mapping.js';
import { Commands } from '../envd/commands.js';
import { EnvdConnection } from '../envd/envd-connection.js';
import { Files } from '../envd/files.js';
import { Pty } from '../envd/pty.js';
import type { SnapshotInfo } from '../snapshot/snapshot-info.js';
import type { SandboxDetail } from './sandbox-info.js';
import type { ForkOptions, NetworkUpdate, SandboxMetric, Sandboxes } from './sandboxes.js';

/** A sandbox. */
export class Sandbox implements AsyncDisposable {
  readonly sandboxId: string;
  readonly templateId: string;
  /** The version of envd in the sandbox. */
  readonly envdVersion: string;
  /** Run commands. */
  readonly commands: Commands;
  /** Read and write files. */
  readonly files: Files;
  /** Interactive terminals. */
  readonly pty: Pty;
  readonly #sandboxes: Sandboxes;
  readonly #connection: EnvdConnection;
  readonly #domain: string | null | undefined;

  /** @internal Handles come from `client.sandboxes`. */
  constructor(sandboxes: Sandboxes, wire: SandboxWire) {
    const config = sandboxes.api.config;
    this.#sandboxes = sandboxes;
    this.sandboxId = wire.sandboxID;
    this.templateId = wire.templateID;
    this.envdVersion = wire.envdVersion;
    this.#domain = wire.domain;
    this.#connection = new EnvdConnection({
      sandboxId: wire.sandboxID,
      sandboxUrl: config.sandboxUrl,
      fetch: config.fetch,
      accessToken: wire.envdAccessToken,
    });
    this.commands = new Commands(this.#connection);
    this.files = new Files(this.#connection);
    this.pty = new Pty(this.#connection);
  }

  /** The sandbox's details as the node has them now. */
  getInfo(options: RequestOptions = {}): Promise<SandboxDetail> {
    return this.#sandboxes.get(this.sandboxId, options);
  }

  /** Whether envd in the sandbox answers (false once killed or paused). */
  async isRunning(options: RequestOptions = {}): Promise<boolean> {
    const res = await send(
      this.#connection.fetch,
      {
        url: `${this.#connection.sandboxUrl}/health`,
        what: 'GET /health (envd)',
        init: { method: 'GET', headers: this.#connection.headers() },
      },
      options,
    );
    const body = await readAnswerBody(res);
    if (res.ok) return true;
    if (res.status === 502) return false;
    throw errorFromAnswer(res.status, body);
  }

  /** Pauses the sandbox (see {@link Sandboxes.pause}). */
  pause(options: RequestOptions & { keepMemory?: boolean } = {}): Promise<void> {
    return this.#sandboxes.pause(this.sandboxId, options);
  }

  /** Resumes the paused sandbox; this handle keeps working. */
  async resume(options: RequestOptions & { timeoutMs?: number } = {}): Promise<void> {
    const resumed = await this.#sandboxes.resume(this.sandboxId, options);
    this.#connection.accessToken = resumed.#connection.accessToken;
  }

  /** Captures the sandbox as a snapshot; create sandboxes from `snapshotId`. */
  snapshot(options: RequestOptions & { name?: string } = {}): Promise<SnapshotInfo> {
    return this.#sandboxes.snapshot(this.sandboxId, options);
  }

  /**
   * Makes `count` copy-on-write copies of the running sandbox. All or
   * nothing: if one child fails, the others are killed and the error thrown.
   */
  async fork(count: number, options: ForkOptions = {}): Promise<Sandbox[]> {
    const results = await this.#sandboxes.fork(this.sandboxId, count, options);
    const failed = results.find((r) => r.error !== undefined);
    const children = results.flatMap((r) => (r.sandbox === undefined ? [] : [r.sandbox]));
    if (failed?.error !== undefined) {
      await Promise.allSettled(children.map((c) => c.kill()));
      throw failed.error;
    }
    return children;
  }

  /** Sets the TTL to `timeoutMs` from now. */
  setTimeout(timeoutMs: number, options: RequestOptions = {}): Promise<void> {
    return this.#sandboxes.setTimeout(this.sandboxId, timeoutMs, options);
  }

  /** Replaces the egress policy. */
  updateNetwork(update: NetworkUpdate): Promise<void> {
    return this.#sandboxes.updateNetwork(this.sandboxId, update);
  }

  /** Resource samples (CPU, memory, disk) between two times. */
  getMetrics(
    options: RequestOptions & { start?: Date; end?: Date } = {},
  ): Promise<SandboxMetric[]> {
    return this.#sandboxes.metrics(this.sandboxId, options);
  }

  /** The tail of the VM console. */
  logs(options: RequestOptions & { lines?: number } = {}): Promise<string> {
    return this.#sandboxes.logs(this.sandboxId, options);
  }

  /** Kills the sandbox; false when it was already gone. */
  kill(options: RequestOptions = {}): Promise<boolean> {
    return this.#sandboxes.kill(this.sandboxId, options);
  }

  /**
   * The host that reaches `port` in the sandbox through the node's proxy:
   * `{port}-{id}.{domain}`. The domain is the node's, else the client's
   * `domain`, else the API URL's host (send requests to the node with this
   * value as `Host` when no wildcard DNS resolves it).
   */
  getHost(port: number): string {
    const config = this.#sandboxes.api.config;
    const domain = this.#domain ?? config.domain ?? new URL(config.apiUrl).host;
    return `${port}-${this.sandboxId}.${domain}`;
  }

  /** Kills the sandbox (`await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill();
  }
}
