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
import type { EgressPolicy } from '@aenv/network';
import { AenvError, LOG_FIELDS, newId, newToken, toAenvError } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { DocTable } from '../store/node-store.js';
import type { TemplateCatalog } from '../template/template-catalog.js';
import type { LaunchSource, SandboxLauncher } from './launcher.js';
import { startMachine } from './machine-start.js';
import {
  fromSandboxDoc,
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
  #closed = false;

  constructor(options: OrchestratorOptions) {
    this.#o = options;
  }

  /**
   * Loads the sandboxes of a previous run: paused ones come back paused;
   * ones that had a machine lost it with the old process and are removed.
   * @returns the ids of paused sandboxes that a shutdown paused (to resume).
   */
  async recover(): Promise<string[]> {
    const toResume: string[] = [];
    for (const doc of this.#o.sandboxes.all()) {
      const record = fromSandboxDoc(doc);
      const snapshot = record.pausedSnapshotId && this.#o.snapshots.find(record.pausedSnapshotId);
      if (record.state === 'paused' && snapshot) {
        this.#entries.set(record.id, new SandboxEntry(record));
        if (record.resumeOnStart) toResume.push(record.id);
        continue;
      }
      this.#o.logger.warn('sandbox lost with the previous node process', {
        [LOG_FIELDS.sandboxId]: record.id,
        state: record.state,
      });
      this.#o.sandboxes.delete(record.id);
      await this.#releaseSnapshot(record.sourceSnapshotId);
    }
    for (const s of this.#o.snapshots.list()) {
      if (s.kind === 'pause') await this.#releaseSnapshot(s.id);
    }
    return toResume;
  }

  /**
   * Creates a sandbox from a template (a restore of its snapshot) and returns
   * once envd answers. The TTL starts then.
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`, `SBX_CAPACITY`, `SBX_START_TIMEOUT`,
   *   `SBX_START_FAILED`, `NODE_SHUTTING_DOWN`.
   */
  async create(req: CreateSandboxRequest): Promise<SandboxRecord> {
    this.#assertOpen();
    const template = this.#o.templates.resolve(req.templateId);
    const snapshot = this.#o.snapshots.get(template.snapshotId);
    this.#assertCapacity();
    const now = new Date();
    const record: SandboxRecord = {
      id: newId(),
      templateId: template.id,
      alias: template.alias,
      metadata: { ...req.metadata },
      envVars: { ...req.envVars },
      vcpus: snapshot.vcpus,
      memoryMiB: snapshot.memoryMiB,
      diskSizeMiB: snapshot.diskSizeMiB,
      envdVersion: this.#o.envdVersion,
      envdAccessToken: req.secure ? newToken() : undefined,
      network: req.network,
      lifecycle: req.lifecycle,
      startedAt: now,
      endAt: now,
      timeoutSeconds: req.timeoutSeconds,
      state: 'creating',
      pausedSnapshotId: undefined,
      sourceSnapshotId: snapshot.id,
      pausedAt: undefined,
      resumeOnStart: false,
      createTimings: {},
    };
    const entry = new SandboxEntry(record);
    this.#entries.set(record.id, entry);
    try {
      await entry.queue.run(() => this.#startEntry(entry, sourceOf(snapshot), undefined, 'create'));
    } catch (err) {
      this.#entries.delete(record.id);
      throw err;
    }
    return record;
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
      .filter((r) => isVisible(r.state) && matches(r, filter))
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
   * @throws {AenvError} `SBX_NOT_FOUND`, `SBX_INVALID_STATE` (409: not paused),
   *   `SBX_CAPACITY`, start errors (the sandbox stays paused).
   */
  async resume(id: string, seconds: number | undefined): Promise<SandboxRecord> {
    this.#assertOpen();
    const entry = this.#visible(id);
    return entry.queue.run(async () => {
      assertAlive(entry);
      assertOperation(id, 'resume', entry.record.state);
      this.#assertCapacity();
      if (seconds !== undefined) entry.record.timeoutSeconds = seconds;
      const snapshot = this.#o.snapshots.get(entry.record.pausedSnapshotId ?? '');
      await this.#startEntry(entry, sourceOf(snapshot), entry.record.envdAccessToken, 'resume');
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
    this.#armTtl(entry);
    const machine = entry.machine;
    void machine?.exited.then((exit) => {
      if (entry.machine === machine) this.#onMachineExit(entry, exit.reason);
    });
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
    const snapshot: SnapshotRecord = {
      id: snapshotId,
      kind: 'pause',
      sandboxId: record.id,
      templateId: record.templateId,
      dir: saved.dir,
      image: saved.image,
      vcpus: record.vcpus,
      memoryMiB: record.memoryMiB,
      diskSizeMiB: record.diskSizeMiB,
      envdVersion: record.envdVersion,
      createdAt: new Date().toISOString(),
    };
    const previous = record.sourceSnapshotId;
    entry.machine = undefined;
    record.pausedSnapshotId = snapshotId;
    record.sourceSnapshotId = undefined;
    record.pausedAt = new Date();
    this.#transition(entry, 'paused');
    this.#o.snapshots.add(snapshot);
    this.#persist(entry);
    this.#o.metrics?.record('pause', 'ok', { total: performance.now() - t0 });
    this.#o.logger.info('sandbox paused', {
      [LOG_FIELDS.sandboxId]: record.id,
      [LOG_FIELDS.snapshotId]: snapshotId,
      [LOG_FIELDS.durationMs]: Math.round(performance.now() - t0),
    });
    await this.#releaseSnapshot(previous);
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
    } finally {
      entry.machine = undefined;
      record.state = 'killed';
      this.#entries.delete(record.id);
      this.#o.sandboxes.delete(record.id);
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
    clearTimeout(entry.ttl);
    if (entry.record.state !== 'running') return;
    const delay = Math.max(0, entry.record.endAt.getTime() - Date.now());
    // setTimeout's limit is 2^31-1 ms; longer TTLs re-arm when the timer fires.
    entry.ttl = setTimeout(() => this.#onTtl(entry), Math.min(delay, 2 ** 31 - 1));
    entry.ttl.unref();
  }

  #onTtl(entry: SandboxEntry): void {
    const { record } = entry;
    if (record.state !== 'running' || this.#closed) return;
    if (record.endAt.getTime() > Date.now()) return this.#armTtl(entry);
    const act =
      record.lifecycle.onTimeout === 'pause'
        ? this.pause(record.id, record.lifecycle.keepMemory).catch(() =>
            this.#kill(entry, 'timeout (pause failed)'),
          )
        : this.#kill(entry, 'timeout');
    act.catch((err: unknown) => this.#logError(record.id, 'timeout handling failed', err));
  }

  #onMachineExit(entry: SandboxEntry, reason: string): void {
    if (entry.killRequested || entry.record.state === 'killed') return;
    this.#o.logger.warn('sandbox machine exited', { [LOG_FIELDS.sandboxId]: entry.id, reason });
    void entry.queue
      .runFirst(() => {
        if (entry.record.state === 'running') this.#transition(entry, 'failed');
        return Promise.resolve();
      })
      .then(() => this.#kill(entry, `machine exited: ${reason}`))
      .catch((err: unknown) => this.#logError(entry.id, 'cleanup after exit failed', err));
  }

  async #releaseSnapshot(id: string | undefined): Promise<void> {
    if (id === undefined) return;
    const refs = (sid: string): boolean =>
      this.#o.templates.usesSnapshot(sid) ||
      [...this.#entries.values()].some(
        (e) => e.record.pausedSnapshotId === sid || e.record.sourceSnapshotId === sid,
      );
    await this.#o.snapshots
      .release(id, refs)
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

/** How a machine starts from a snapshot: restore its memory, or boot its disk. */
function sourceOf(snapshot: SnapshotRecord): LaunchSource {
  return snapshot.dir === undefined
    ? { kind: 'boot', image: snapshot.image }
    : { kind: 'restore', snapshot: { dir: snapshot.dir, image: snapshot.image } };
}

function errorCode(err: unknown): string {
  return err instanceof AenvError ? err.code : 'INTERNAL';
}

/** Operations queued behind a kill find the sandbox gone. */
function assertAlive(entry: SandboxEntry): void {
  if (entry.killRequested || entry.record.state === 'killed') throw notFound(entry.id);
}

function notFound(id: string): AenvError {
  return new AenvError('SBX_NOT_FOUND', `sandbox ${id} not found`, { fields: { sandboxId: id } });
}

function matches(r: SandboxRecord, f: SandboxFilter): boolean {
  if (f.states !== undefined && !f.states.includes(r.state)) return false;
  if (f.templateId !== undefined && r.templateId !== f.templateId && r.alias !== f.templateId) {
    return false;
  }
  if (f.startedAfter !== undefined && r.startedAt <= f.startedAfter) return false;
  for (const [k, v] of Object.entries(f.metadata ?? {})) if (r.metadata[k] !== v) return false;
  return true;
}
