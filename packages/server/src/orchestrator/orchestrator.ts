/**
 * The orchestrator: owns every sandbox record of this node and its
 * lifecycle (create, connect, set timeout, kill, TTL expiry).
 *
 * Create runs: resolve template → launch the machine → wait for envd →
 * `/init` → running, with a `Cleanup` so a failure or a concurrent kill
 * half-way stops what was started. A kill during create aborts it and waits
 * for it to unwind. A machine that dies on its own is marked failed and
 * removed. Records are in memory for now (persistence comes with the
 * lifecycle work).
 *
 * @module
 */
import type { EgressPolicy } from '@aenv/network';
import { AenvError, Cleanup, LOG_FIELDS, newId, newToken, toAenvError } from '@aenv/shared';
import { errorFields, type Logger } from '../log.js';
import { ENVD_PORT, initEnvd, waitForEnvd } from './envd-client.js';
import type { LaunchedSandbox, SandboxLauncher } from './launcher.js';
import type {
  CreateSandboxRequest,
  GuestAddress,
  SandboxFilter,
  SandboxRecord,
} from './sandbox.js';
import type { TemplateCatalog } from './template-catalog.js';

/** Knobs of the orchestrator. */
export interface OrchestratorOptions {
  readonly launcher: SandboxLauncher;
  readonly templates: TemplateCatalog;
  readonly logger: Logger;
  /** The envd version every sandbox reports (semver). */
  readonly envdVersion: string;
  /** Most sandboxes alive at once on this node. */
  readonly maxSandboxes: number;
  /** How long create waits for envd to answer. */
  readonly envdReadyTimeoutMs: number;
}

interface Entry {
  readonly record: SandboxRecord;
  readonly abort: AbortController;
  machine?: LaunchedSandbox;
  ttl?: NodeJS.Timeout;
  /** Settles when a create in progress has finished or unwound. */
  creating?: Promise<unknown>;
  killing?: Promise<void>;
}

/** Owns the sandboxes of this node. */
export class Orchestrator {
  readonly #opts: OrchestratorOptions;
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(options: OrchestratorOptions) {
    this.#opts = options;
  }

  /**
   * Creates a sandbox and returns once envd answers.
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`, `SBX_CAPACITY`, `SBX_START_TIMEOUT`, `NODE_SHUTTING_DOWN`.
   */
  async create(req: CreateSandboxRequest): Promise<SandboxRecord> {
    if (this.#closed) throw new AenvError('NODE_SHUTTING_DOWN', 'the node is shutting down');
    const template = this.#opts.templates.resolve(req.templateId);
    if (this.#entries.size >= this.#opts.maxSandboxes) {
      throw new AenvError(
        'SBX_CAPACITY',
        `this node runs at most ${this.#opts.maxSandboxes} sandboxes; kill one or retry later`,
      );
    }
    const now = new Date();
    const record: SandboxRecord = {
      id: newId(),
      templateId: template.id,
      alias: template.alias,
      metadata: { ...req.metadata },
      envVars: { ...req.envVars },
      vcpus: template.vcpus,
      memoryMiB: template.memoryMiB,
      diskSizeMiB: template.diskSizeMiB,
      envdVersion: this.#opts.envdVersion,
      envdAccessToken: req.secure ? newToken() : undefined,
      network: req.network,
      startedAt: now,
      createTimings: {},
      endAt: new Date(now.getTime() + req.timeoutSeconds * 1000),
      state: 'creating',
    };
    const entry: Entry = { record, abort: new AbortController() };
    this.#entries.set(record.id, entry);
    const creating = this.#start(entry);
    entry.creating = creating.catch(() => undefined);
    return creating;
  }

  async #start(entry: Entry): Promise<SandboxRecord> {
    const { record, abort } = entry;
    const started = performance.now();
    await using cleanup = new Cleanup({ onLateError: (err) => this.#logCleanupError(record, err) });
    cleanup.add('forget record', () => void this.#entries.delete(record.id));
    try {
      const machine = await this.#opts.launcher.launch(
        {
          sandboxId: record.id,
          templateId: record.templateId,
          vcpus: record.vcpus,
          memoryMiB: record.memoryMiB,
          egress: record.network.egress,
        },
        abort.signal,
      );
      cleanup.add('stop machine', () => machine.stop());
      entry.machine = machine;
      const envd = machine.address(ENVD_PORT);
      await waitForEnvd(envd, this.#opts.envdReadyTimeoutMs, abort.signal);
      const envdReadyAt = performance.now();
      await initEnvd(envd, { envVars: record.envVars, accessToken: record.envdAccessToken });
      abort.signal.throwIfAborted();
      record.createTimings = await stageTimings(machine, started, envdReadyAt);
    } catch (err) {
      const reason: unknown = abort.signal.aborted ? abort.signal.reason : err;
      this.#opts.logger.warn('sandbox create failed', {
        [LOG_FIELDS.sandboxId]: record.id,
        ...errorFields(reason),
      });
      throw toAenvError(reason, 'SBX_START_FAILED', 'sandbox failed to start');
    }
    cleanup.move();
    record.state = 'running';
    this.#armTtl(entry);
    void entry.machine.exited.then((exit) => this.#onMachineExit(entry, exit.reason));
    this.#opts.logger.info('sandbox created', {
      [LOG_FIELDS.sandboxId]: record.id,
      [LOG_FIELDS.templateId]: record.templateId,
      [LOG_FIELDS.durationMs]: Math.round(performance.now() - started),
      stages: record.createTimings,
    });
    return record;
  }

  /**
   * The record of a live sandbox.
   * @throws {AenvError} `SBX_NOT_FOUND`.
   */
  get(id: string): SandboxRecord {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.record.state === 'creating') throw notFound(id);
    return entry.record;
  }

  /** Live sandboxes matching a filter, oldest first. */
  list(filter: SandboxFilter = {}): SandboxRecord[] {
    return [...this.#entries.values()]
      .map((e) => e.record)
      .filter((r) => r.state !== 'creating' && matches(r, filter))
      .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
  }

  /** Where a guest port of a running sandbox is reachable, or `undefined`. */
  address(id: string, guestPort: number): GuestAddress | undefined {
    const entry = this.#entries.get(id);
    if (entry?.record.state !== 'running' || entry.machine === undefined) return undefined;
    return entry.machine.address(guestPort);
  }

  /**
   * Sets the TTL to `seconds` from now.
   * @throws {AenvError} `SBX_NOT_FOUND`.
   */
  setTimeout(id: string, seconds: number): void {
    const entry = this.#running(id);
    entry.record.endAt = new Date(Date.now() + seconds * 1000);
    this.#armTtl(entry);
  }

  /**
   * Connects to a running sandbox: extends its TTL if `seconds` reaches
   * further than the current one.
   * @throws {AenvError} `SBX_NOT_FOUND`.
   */
  connect(id: string, seconds: number | undefined): SandboxRecord {
    const entry = this.#running(id);
    if (seconds !== undefined) {
      const wanted = Date.now() + seconds * 1000;
      if (wanted > entry.record.endAt.getTime()) {
        entry.record.endAt = new Date(wanted);
        this.#armTtl(entry);
      }
    }
    return entry.record;
  }

  /**
   * Replaces the egress policy of a running sandbox atomically.
   * @throws {AenvError} `SBX_NOT_FOUND`; network errors.
   */
  async updateEgress(id: string, policy: EgressPolicy): Promise<void> {
    const entry = this.#running(id);
    await entry.machine?.applyEgress(policy);
    entry.record.network = { ...entry.record.network, egress: policy };
  }

  /**
   * Kills a sandbox (also one still being created).
   * @throws {AenvError} `SBX_NOT_FOUND`.
   */
  async kill(id: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw notFound(id);
    await this.#kill(entry, 'killed by request');
  }

  /** Kills every sandbox and refuses new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#entries.values()].map((e) => this.#kill(e, 'node shutdown')));
  }

  #running(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry?.record.state !== 'running') throw notFound(id);
    return entry;
  }

  #kill(entry: Entry, reason: string): Promise<void> {
    entry.killing ??= this.#doKill(entry, reason);
    return entry.killing;
  }

  async #doKill(entry: Entry, reason: string): Promise<void> {
    const { record } = entry;
    clearTimeout(entry.ttl);
    if (record.state === 'creating') {
      entry.abort.abort(
        new AenvError('SBX_KILLED', `sandbox ${record.id} was killed while starting`),
      );
      await entry.creating;
      record.state = 'killed';
      return;
    }
    record.state = 'killing';
    try {
      await entry.machine?.stop();
    } finally {
      record.state = 'killed';
      this.#entries.delete(record.id);
      this.#opts.logger.info('sandbox killed', { [LOG_FIELDS.sandboxId]: record.id, reason });
    }
  }

  #armTtl(entry: Entry): void {
    clearTimeout(entry.ttl);
    const delay = Math.max(0, entry.record.endAt.getTime() - Date.now());
    // setTimeout's limit is 2^31-1 ms; longer TTLs re-arm when the timer fires.
    entry.ttl = setTimeout(() => this.#onTtl(entry), Math.min(delay, 2 ** 31 - 1));
    entry.ttl.unref();
  }

  #onTtl(entry: Entry): void {
    if (entry.record.endAt.getTime() > Date.now()) return this.#armTtl(entry);
    this.#kill(entry, 'timeout').catch((err: unknown) => {
      this.#opts.logger.error('TTL kill failed', {
        [LOG_FIELDS.sandboxId]: entry.record.id,
        ...errorFields(err),
      });
    });
  }

  #onMachineExit(entry: Entry, reason: string): void {
    if (entry.killing !== undefined) return;
    entry.record.state = 'failed';
    this.#opts.logger.warn('sandbox machine exited', {
      [LOG_FIELDS.sandboxId]: entry.record.id,
      reason,
    });
    void this.#kill(entry, `machine exited: ${reason}`).catch(() => undefined);
  }

  #logCleanupError(record: SandboxRecord, err: unknown): void {
    this.#opts.logger.error('cleanup failed', {
      [LOG_FIELDS.sandboxId]: record.id,
      ...errorFields(err),
    });
  }
}

/** Per-stage durations of a create, ms. */
async function stageTimings(
  machine: LaunchedSandbox,
  started: number,
  envdReadyAt: number,
): Promise<Record<string, number>> {
  const { marks } = machine;
  const initAt = await Promise.race([marks.initStartedAt, Promise.resolve(undefined)]);
  const round = (ms: number): number => Math.round(ms * 10) / 10;
  const out: Record<string, number> = {
    queue: round(marks.startedAt - started),
    vmmSpawn: round(marks.vmmRunningAt - marks.startedAt),
    envdInit: round(performance.now() - envdReadyAt),
    total: round(performance.now() - started),
  };
  if (initAt === undefined) {
    out.guestToEnvdReady = round(envdReadyAt - marks.vmmRunningAt);
  } else {
    out.kernelToInit = round(initAt - marks.vmmRunningAt);
    out.initToEnvdReady = round(envdReadyAt - initAt);
  }
  return out;
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
