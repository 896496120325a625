/**
 * The orchestrator: owns every sandbox of this node and its lifecycle —
 * create (a restore of the template's snapshot), pause, resume, connect,
 * TTL (pause or kill at expiry), egress updates, kill — following the state
 * machine of `sandbox-state.ts`, one operation at a time per sandbox
 * (`operation-queue.ts`), persisting every state change in the node store
 * before acknowledging it.
 *
 * Paused sandboxes hold no machine: their snapshot (memory + device state
 * + sealed disk layers) is all that remains, and it survives a node
 * restart.
 *
 * @module
 */
import { StartGate } from './start-gate.js';
import type { EgressPolicy } from '@aenv/network';
import { AenvError, LOG_FIELDS, newToken, toAenvError } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { DocTable } from '../store/node-store.js';
import type { TemplateCatalog } from '../template/template-catalog.js';
import type { LaunchSource, SandboxLauncher } from './launcher.js';
import type { OrchestratorHooks } from './orchestrator-hooks.js';
import { deleteSnapshotOrTemplate } from '../snapshot/delete-snapshot.js';
import { crashPoint, recordedPoint } from './crash-point.js';
import { startMachine } from './machine-start.js';
import { watchMachine, type FailureDeps } from './sandbox-failure.js';
import { assertSnapshotNameFree, checkpointEntry } from './sandbox-checkpoint.js';
import { recoverRecords } from './recovery.js';
import {
  assertAlive,
  assertCount,
  errorCode,
  matchesFilter,
  notFound,
  settle,
  sourceOf,
  type ForkRequest,
  type StartResult,
} from './sandbox-helpers.js';
import { forkChildRecord, newRecord, resolveSource, snapshotOf } from './sandbox-source.js';
import {
  toSandboxDoc,
  type CreateSandboxRequest,
  type GuestAddress,
  type SandboxDoc,
  type SandboxFilter,
  type SandboxRecord,
} from './sandbox.js';
import { SandboxEntry } from './sandbox-entry.js';
import {
  assertOperation,
  assertTransition,
  isVisible,
  type SandboxState,
} from './sandbox-state.js';

/** What the orchestrator runs on. */
export interface OrchestratorOptions {
  readonly launcher: SandboxLauncher;
  readonly sandboxes: DocTable<SandboxDoc>;
  readonly templates: TemplateCatalog;
  readonly snapshots: SnapshotCatalog;
  readonly logger: Logger;
  readonly metrics?: NodeMetrics;
  /** The envd version every sandbox reports (semver). */
  readonly envdVersion: string;
  /** Most sandboxes with a machine (not paused) at once. */
  readonly maxSandboxes: number;
  /** How long a start waits for envd to answer. */
  readonly envdReadyTimeoutMs: number;
  /** Most children one fork (or sandboxes one batch create) may ask for. */
  readonly maxForkCount: number;
  /** Most machines started at once, node-wide (creates, batches, fork children); the rest queue. */
  readonly startConcurrency?: number;
  /** Lifecycle hooks (a clustered node's exports and bindings). */
  readonly hooks?: OrchestratorHooks;
}

/** Options of {@link Orchestrator.close}. */
export interface CloseOptions {
  /** Pause running sandboxes (and resume them at the next start) instead of killing them. */
  readonly pauseRunning: boolean;
}

const MACHINE_STATES: readonly SandboxState[] = [
  'creating',
  'running',
  'pausing',
  'resuming',
  'snapshotting',
  'forking',
];

/** Owns the sandboxes of this node. */
export class Orchestrator {
  readonly #o: OrchestratorOptions;
  readonly #entries = new Map<string, SandboxEntry>();
  readonly #gate: StartGate;
  #closed = false;
  readonly #failure: FailureDeps = {
    logger: () => this.#o.logger,
    persist: (e) => this.#persist(e),
    armTtl: (e) => this.#armTtl(e),
    count: () => this.#o.metrics?.record('machine-exit', 'failed'),
  };

  constructor(options: OrchestratorOptions) {
    this.#o = options;
    this.#gate = new StartGate(options.startConcurrency ?? Number.POSITIVE_INFINITY);
  }

  /**
   * Loads the sandboxes of a previous run: paused ones come back paused;
   * ones that had a machine lost it with the old process and are removed.
   * @returns the ids of paused sandboxes that a shutdown paused (to resume).
   */
  async recover(): Promise<string[]> {
    const paused = await recoverRecords({
      ...this.#o,
      register: (r) => this.#entries.set(r.id, new SandboxEntry(r)),
      release: (id) => this.#releaseSnapshot(id),
    });
    for (const entry of this.#entries.values()) this.#armTtl(entry); // failed ones expire
    return paused.filter((r) => r.resumeOnStart).map((r) => r.id);
  }

  /**
   * Creates a sandbox from a template (a restore of its snapshot) and returns
   * once envd answers. The TTL starts then.
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`, `SBX_CAPACITY`, `SBX_START_TIMEOUT`,
   *   `SBX_START_FAILED`, `NODE_SHUTTING_DOWN`.
   */
  async create(req: CreateSandboxRequest): Promise<SandboxRecord> {
    this.#assertOpen();
    const source = resolveSource(this.#o.templates, this.#o.snapshots, req.templateId);
    return this.#startNew(newRecord(this.#o.envdVersion, req, source, undefined), source.snapshot);
  }

  /** Deletes a snapshot unless a template or a sandbox still uses it (a rebuilt template's old one). */
  releaseSnapshot(id: string): Promise<void> {
    return this.#releaseSnapshot(id);
  }

  /**
   * Creates `count` sandboxes from one template at once (aenv's batch
   * create); each succeeds or fails on its own.
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`, `INVALID_ARGUMENT` (count), `NODE_SHUTTING_DOWN`.
   */
  async createMany(req: CreateSandboxRequest, count: number): Promise<StartResult[]> {
    this.#assertOpen();
    assertCount(count, this.#o.maxForkCount);
    const source = resolveSource(this.#o.templates, this.#o.snapshots, req.templateId);
    return settle(
      count,
      () => this.#startNew(newRecord(this.#o.envdVersion, req, source, undefined), source.snapshot),
      this.#o.startConcurrency,
    );
  }

  /**
   * Captures a running sandbox into a named, immutable user snapshot; the
   * sandbox is frozen only for the capture. Snapshots outlive their sandbox
   * and are accepted as `templateID`.
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE`, `SNAPSHOT_NAME_TAKEN`.
   */
  async snapshot(id: string, name: string | undefined): Promise<SnapshotRecord> {
    const entry = this.#visible(id);
    assertSnapshotNameFree(this.#o.snapshots, name);
    return entry.queue.run(() => this.#checkpoint(entry, 'user', name));
  }

  /**
   * Forks a running sandbox: one checkpoint, then `count` children restored
   * from it at once, each with a fresh id, token, entropy and slot and
   * everything else inherited; the source runs on with its id and TTL.
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE`, `INVALID_ARGUMENT` (count).
   */
  async fork(id: string, req: ForkRequest): Promise<StartResult[]> {
    this.#assertOpen();
    assertCount(req.count, this.#o.maxForkCount);
    const entry = this.#visible(id);
    const snapshot = await entry.queue.run(() => this.#checkpoint(entry, 'fork', undefined));
    const parent = entry.record;
    const results = await settle(
      req.count,
      () => this.#startNew(forkChildRecord(this.#o.envdVersion, parent, req, snapshot), snapshot),
      this.#o.startConcurrency,
    );
    await this.#releaseSnapshot(snapshot.id);
    return results;
  }

  /** User snapshots (not deleted), oldest first. */
  listSnapshots(): SnapshotRecord[] {
    return this.#o.snapshots.list().filter((r) => r.kind === 'user' && r.deleted !== true);
  }

  /**
   * Deletes a user snapshot (its files go once nothing runs from it), or,
   * given a template id, the template (the built-in `base` stays).
   * @throws {AenvError} `SNAPSHOT_NOT_FOUND`, `TEMPLATE_PROTECTED`.
   */
  async deleteSnapshotOrTemplate(id: string): Promise<void> {
    await deleteSnapshotOrTemplate(this.#o.templates, this.#o.snapshots, id, {
      referenced: (sid) => this.#referenced(sid),
      release: (sid) => this.#releaseSnapshot(sid),
    });
  }

  /** The record of a visible sandbox, or undefined. */
  find(id: string): SandboxRecord | undefined {
    const entry = this.#entries.get(id);
    return entry !== undefined && isVisible(entry.record.state) ? entry.record : undefined;
  }

  /**
   * The record of a visible sandbox.
   * @throws {AenvError} `SBX_NOT_FOUND`.
   */
  get(id: string): SandboxRecord {
    const entry = this.#entries.get(id);
    if (entry === undefined || !isVisible(entry.record.state)) throw notFound(id);
    return entry.record;
  }

  /** Visible sandboxes matching a filter, oldest first. */
  list(filter: SandboxFilter = {}): SandboxRecord[] {
    return [...this.#entries.values()]
      .map((e) => e.record)
      .filter((r) => isVisible(r.state) && matchesFilter(r, filter))
      .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
  }

  /** Sandboxes by state (metrics). */
  countByState(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const e of this.#entries.values()) out[e.record.state] = (out[e.record.state] ?? 0) + 1;
    return out;
  }

  /** Where a guest port of a running sandbox is reachable, or `undefined`. */
  address(id: string, guestPort: number): GuestAddress | undefined {
    const entry = this.#entries.get(id);
    if (entry?.record.state !== 'running' || entry.machine === undefined) return undefined;
    return entry.machine.address(guestPort);
  }

  /**
   * Like {@link address}, but a paused sandbox with `autoResume` is resumed
   * first (the proxy's path).
   */
  async addressForTraffic(id: string, guestPort: number): Promise<GuestAddress | undefined> {
    const entry = this.#entries.get(id);
    if (entry?.record.state === 'paused' && entry.record.lifecycle.autoResume) {
      await this.resume(id, undefined).catch((err: unknown) => {
        this.#o.logger.warn('auto-resume failed', {
          [LOG_FIELDS.sandboxId]: id,
          ...errorFields(err),
        });
      });
    }
    return this.address(id, guestPort);
  }

  /**
   * Takes over a paused sandbox from another node of the cluster; its
   * pause snapshot must be in the catalog already. Idempotent.
   * @throws {AenvError} `SBX_INVALID_STATE` unless paused with a known snapshot.
   */
  adopt(record: SandboxRecord): void {
    this.#assertOpen();
    if (this.#entries.has(record.id)) return;
    const snapshot = this.#o.snapshots.find(record.pausedSnapshotId ?? '');
    if (record.state !== 'paused' || snapshot === undefined) {
      throw new AenvError('SBX_INVALID_STATE', `sandbox ${record.id} is not paused here`, {
        fields: { sandboxId: record.id },
      });
    }
    const entry = new SandboxEntry({ ...record, resumeOnStart: false });
    this.#entries.set(record.id, entry);
    this.#persist(entry);
  }

  /**
   * Sets the TTL of a running sandbox to `seconds` from now (may shorten).
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE`.
   */
  setTimeout(id: string, seconds: number): void {
    const entry = this.#visible(id);
    entry.record.timeoutSeconds = seconds;
    if (entry.record.state === 'paused') return this.#persist(entry);
    entry.record.endAt = new Date(Date.now() + seconds * 1000);
    this.#persist(entry);
    this.#armTtl(entry);
  }

  /**
   * Extends the TTL of a running sandbox to `seconds` from now, never shortening it.
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE`.
   */
  refresh(id: string, seconds: number): void {
    const entry = this.#visible(id);
    assertOperation(id, 'exec', entry.record.state);
    this.#extend(entry, seconds);
  }

  /**
   * Connects to a sandbox: a running one gets its TTL extended (never
   * shortened); a paused one is resumed.
   * @returns the record and whether it was resumed (E2B answers 201 then).
   * @throws {AenvError} `SBX_NOT_FOUND`; resume errors.
   */
  async connect(
    id: string,
    seconds: number | undefined,
  ): Promise<{ record: SandboxRecord; resumed: boolean }> {
    const entry = this.#visible(id);
    if (entry.record.state === 'paused') {
      return { record: await this.resume(id, seconds), resumed: true };
    }
    if (seconds !== undefined && entry.record.state === 'running') this.#extend(entry, seconds);
    return { record: entry.record, resumed: false };
  }

  /**
   * Pauses a running sandbox: memory (unless `keepMemory` is false), device
   * state and disk are saved; its machine, slot and upper are released.
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE` (409: already paused).
   */
  async pause(id: string, keepMemory = true): Promise<void> {
    const entry = this.#visible(id);
    await entry.queue.run(() => this.#pauseEntry(entry, keepMemory));
  }

  /**
   * Resumes a paused sandbox with `seconds` of TTL (default: its last).
   * `rotateToken` gives a secure sandbox a new envd access token (the old
   * one is refused from then on). Only `POST /sandboxes/{id}/resume` asks
   * for it: its callers (the aenv SDK, the e2b SDK's static resume) take the
   * token from the answer. A connect does not rotate (the e2b SDK's
   * `sandbox.connect()` keeps the token it has), nor does an auto-resume
   * by proxied traffic or a daemon restart (their client could not learn
   * a new one).
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE` (409: not paused),
   *   `SBX_CAPACITY`, start errors (the sandbox stays paused).
   */
  async resume(
    id: string,
    seconds: number | undefined,
    options: { readonly rotateToken?: boolean } = {},
  ): Promise<SandboxRecord> {
    this.#assertOpen();
    const entry = this.#visible(id);
    return entry.queue.run(async () => {
      assertAlive(entry);
      assertOperation(id, 'resume', entry.record.state);
      this.#assertCapacity();
      if (seconds !== undefined) entry.record.timeoutSeconds = seconds;
      const snapshot = this.#o.snapshots.get(entry.record.pausedSnapshotId ?? '');
      const current = entry.record.envdAccessToken;
      if (options.rotateToken === true && current !== undefined) {
        entry.record.envdAccessToken = newToken();
      }
      try {
        await this.#startEntry(entry, sourceOf(snapshot), current, 'resume');
      } catch (err) {
        entry.record.envdAccessToken = current; // the paused envd still holds it
        throw err;
      }
      return entry.record;
    });
  }

  /**
   * Replaces the egress policy of a running sandbox atomically.
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE`; network errors.
   */
  async updateEgress(id: string, policy: EgressPolicy): Promise<void> {
    const entry = this.#visible(id);
    await entry.queue.run(async () => {
      assertAlive(entry);
      assertOperation(id, 'exec', entry.record.state);
      await entry.machine?.applyEgress(policy);
      entry.record.network = { ...entry.record.network, egress: policy };
      this.#persist(entry);
    });
  }

  /**
   * Kills a sandbox in any state; a start in progress is aborted. The kill
   * waits for the operation in progress, then goes before queued ones.
   * @throws {AenvError} `SBX_NOT_FOUND`.
   */
  async kill(id: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.record.state === 'killed') throw notFound(id);
    await this.#kill(entry, 'killed by request');
  }

  /** Stops taking work; pauses (or kills) every sandbox with a machine. */
  async close(options: CloseOptions): Promise<void> {
    this.#closed = true;
    await Promise.all(
      [...this.#entries.values()].map(async (entry) => {
        entry.starting?.abort(new AenvError('NODE_SHUTTING_DOWN', 'the node is shutting down'));
        if (!MACHINE_STATES.includes(entry.record.state)) return;
        if (options.pauseRunning && entry.record.state !== 'creating') {
          entry.record.resumeOnStart = true;
          const paused = await this.pause(entry.id).then(
            () => true,
            () => false,
          );
          if (paused) return;
        }
        await this.#kill(entry, 'node shutdown').catch(() => undefined);
      }),
    );
    for (const entry of this.#entries.values()) clearTimeout(entry.ttl);
  }

  /** Registers a new record and starts its machine from `snapshot`. */
  async #startNew(record: SandboxRecord, snapshot: SnapshotRecord): Promise<SandboxRecord> {
    this.#assertCapacity();
    const entry = new SandboxEntry(record);
    this.#entries.set(record.id, entry);
    try {
      await this.#gate.run(() =>
        entry.queue.run(() =>
          this.#startEntry(entry, sourceOf(snapshot), snapshot.envdAccessToken, 'create'),
        ),
      );
    } catch (err) {
      this.#entries.delete(record.id);
      throw err;
    }
    return record;
  }

  /** Captures a running sandbox into a snapshot of `kind` (the machine runs on). */
  #checkpoint(entry: SandboxEntry, kind: 'user' | 'fork', name: string | undefined) {
    const { snapshots, metrics } = this.#o;
    const transition = (e: SandboxEntry, to: SandboxState): void => this.#transition(e, to);
    return checkpointEntry({ snapshots, metrics, transition }, entry, kind, name);
  }

  async #startEntry(
    entry: SandboxEntry,
    source: LaunchSource,
    currentToken: string | undefined,
    op: 'create' | 'resume',
  ): Promise<void> {
    const { record } = entry;
    const from = record.state;
    if (op === 'resume') this.#transition(entry, 'resuming');
    const abort = new AbortController();
    entry.starting = abort;
    try {
      const started = await startMachine({
        launcher: this.#o.launcher,
        record,
        source,
        envdReadyTimeoutMs: this.#o.envdReadyTimeoutMs,
        currentToken,
        signal: abort.signal,
        op,
        onLateError: (err, label) => this.#logError(record.id, `cleanup: ${label}`, err),
      });
      entry.machine = started.machine;
      record.createTimings = started.timings;
    } catch (err) {
      this.#o.metrics?.record(op, errorCode(err));
      this.#o.logger.warn(`sandbox ${op} failed`, {
        [LOG_FIELDS.sandboxId]: record.id,
        ...errorFields(err),
      });
      if (op === 'resume') this.#transition(entry, from === 'paused' ? 'paused' : 'failed');
      throw err;
    } finally {
      entry.starting = undefined;
    }
    this.#onStarted(entry, op);
  }

  #onStarted(entry: SandboxEntry, op: 'create' | 'resume'): void {
    const { record } = entry;
    const pausedSnapshot = record.pausedSnapshotId;
    if (op === 'resume') {
      record.sourceSnapshotId = pausedSnapshot;
      record.pausedSnapshotId = undefined;
      record.pausedAt = undefined;
      record.resumeOnStart = false;
    }
    this.#transition(entry, 'running');
    record.endAt = new Date(Date.now() + record.timeoutSeconds * 1000);
    this.#persist(entry);
    crashPoint(recordedPoint(op, record.parentId !== undefined));
    this.#armTtl(entry);
    if (op === 'resume') this.#o.hooks?.afterResume?.(record);
    watchMachine(this.#failure, entry);
    this.#o.metrics?.record(op, 'ok', record.createTimings);
    this.#o.logger.info(op === 'create' ? 'sandbox created' : 'sandbox resumed', {
      [LOG_FIELDS.sandboxId]: record.id,
      [LOG_FIELDS.templateId]: record.templateId,
      [LOG_FIELDS.durationMs]: record.createTimings.total,
      stages: record.createTimings,
    });
  }

  async #pauseEntry(entry: SandboxEntry, keepMemory: boolean): Promise<void> {
    const { record } = entry;
    assertAlive(entry);
    assertOperation(record.id, 'pause', record.state);
    const machine = entry.machine as NonNullable<SandboxEntry['machine']>;
    const t0 = performance.now();
    this.#transition(entry, 'pausing');
    clearTimeout(entry.ttl);
    const { id: snapshotId, dir } = this.#o.snapshots.allocate();
    let saved;
    try {
      saved = await machine.suspend({ dir, keepMemory });
    } catch (err) {
      this.#o.metrics?.record('pause', errorCode(err));
      this.#logError(record.id, 'pause failed', err);
      this.#transition(entry, 'running');
      this.#armTtl(entry);
      throw toAenvError(err, 'SBX_PAUSE_FAILED', `pausing sandbox ${record.id} failed`);
    }
    const snapshot = snapshotOf(record, { id: snapshotId, kind: 'pause', name: undefined }, saved);
    const previous = record.sourceSnapshotId;
    entry.machine = undefined;
    record.pausedSnapshotId = snapshotId;
    record.sourceSnapshotId = undefined;
    record.pausedAt = new Date();
    this.#transition(entry, 'paused');
    this.#o.snapshots.add(snapshot);
    this.#persist(entry);
    crashPoint('pause.recorded');
    await this.#o.hooks?.afterPause?.(record, snapshot);
    this.#o.metrics?.record('pause', 'ok', { total: performance.now() - t0 });
    this.#o.logger.info('sandbox paused', {
      [LOG_FIELDS.sandboxId]: record.id,
      [LOG_FIELDS.snapshotId]: snapshotId,
      [LOG_FIELDS.durationMs]: Math.round(performance.now() - t0),
    });
    await this.#releaseSnapshot(previous);
    crashPoint('pause.before-answer');
  }

  #kill(entry: SandboxEntry, reason: string): Promise<void> {
    entry.killRequested = true;
    entry.starting?.abort(new AenvError('SBX_KILLED', `sandbox ${entry.id} was killed`));
    return entry.queue.runFirst(() => this.#killEntry(entry, reason));
  }

  async #killEntry(entry: SandboxEntry, reason: string): Promise<void> {
    const { record } = entry;
    if (record.state === 'killed' || !this.#entries.has(record.id)) return;
    const t0 = performance.now();
    clearTimeout(entry.ttl);
    if (record.state !== 'creating') this.#transition(entry, 'killing');
    try {
      await entry.machine?.stop();
      crashPoint('kill.vm-stopped');
    } finally {
      entry.machine = undefined;
      record.state = 'killed';
      this.#entries.delete(record.id);
      this.#o.sandboxes.delete(record.id);
      crashPoint('kill.record-removed');
      this.#o.hooks?.afterKill?.(record);
      await this.#releaseSnapshot(record.pausedSnapshotId);
      await this.#releaseSnapshot(record.sourceSnapshotId);
      this.#o.metrics?.record('kill', 'ok', { total: performance.now() - t0 });
      this.#o.logger.info('sandbox killed', { [LOG_FIELDS.sandboxId]: record.id, reason });
    }
  }

  #extend(entry: SandboxEntry, seconds: number): void {
    const wanted = Date.now() + seconds * 1000;
    if (wanted <= entry.record.endAt.getTime()) return;
    entry.record.endAt = new Date(wanted);
    this.#persist(entry);
    this.#armTtl(entry);
  }

  #armTtl(entry: SandboxEntry): void {
    entry.armTtl(() => this.#onTtl(entry));
  }

  #onTtl(entry: SandboxEntry): void {
    const { record } = entry;
    if ((record.state !== 'running' && record.state !== 'failed') || this.#closed) return;
    if (record.endAt.getTime() > Date.now()) return this.#armTtl(entry);
    const act =
      record.state === 'running' && record.lifecycle.onTimeout === 'pause'
        ? this.pause(record.id, record.lifecycle.keepMemory).catch(() =>
            this.#kill(entry, 'timeout (pause failed)'),
          )
        : this.#kill(entry, 'timeout');
    act.catch((err: unknown) => this.#logError(record.id, 'timeout handling failed', err));
  }

  /** Whether a template or a sandbox (paused in it, or running from it) uses a snapshot. */
  #referenced(sid: string): boolean {
    return (
      this.#o.templates.usesSnapshot(sid) ||
      [...this.#entries.values()].some(
        (e) => e.record.pausedSnapshotId === sid || e.record.sourceSnapshotId === sid,
      )
    );
  }

  async #releaseSnapshot(id: string | undefined): Promise<void> {
    if (id === undefined) return;
    await this.#o.snapshots
      .release(id, (sid) => this.#referenced(sid))
      .catch((err: unknown) => this.#logError(undefined, `releasing snapshot ${id}`, err));
  }

  #transition(entry: SandboxEntry, to: SandboxState): void {
    assertTransition(entry.id, entry.record.state, to);
    entry.record.state = to;
  }

  #persist(entry: SandboxEntry): void {
    if (this.#entries.has(entry.id)) this.#o.sandboxes.put(toSandboxDoc(entry.record));
  }

  #visible(id: string): SandboxEntry {
    const entry = this.#entries.get(id);
    if (entry === undefined || !isVisible(entry.record.state)) throw notFound(id);
    return entry;
  }

  #assertOpen(): void {
    if (this.#closed) throw new AenvError('NODE_SHUTTING_DOWN', 'the node is shutting down');
  }

  #assertCapacity(): void {
    const active = [...this.#entries.values()].filter((e) =>
      MACHINE_STATES.includes(e.record.state),
    ).length;
    if (active >= this.#o.maxSandboxes) {
      throw new AenvError(
        'SBX_CAPACITY',
        `this node runs at most ${this.#o.maxSandboxes} sandboxes; pause or kill one, or retry later`,
      );
    }
  }

  #logError(id: string | undefined, msg: string, err: unknown): void {
    this.#o.logger.error(msg, {
      ...(id === undefined ? {} : { [LOG_FIELDS.sandboxId]: id }),
      ...errorFields(err),
    });
  }
}
