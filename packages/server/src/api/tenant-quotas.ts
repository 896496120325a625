/**
 * Per-tenant quotas on a node ({@link TenantQuotas}): sandboxes that exist,
 * vCPUs and memory of running ones, and a create rate.
 *
 * A start (create, batch, fork, cold start, resume) reserves what it will
 * use before it begins and holds the reservation until it ends, so
 * concurrent starts are counted against each other and cannot overshoot:
 * the check and the reservation happen in one synchronous step. A
 * sandbox being created (or resumed) is counted by its reservation, not
 * by its record (see {@link usageOfRecords}); between its record turning
 * `running` and the release, it is counted twice for a moment: the count
 * errs high, never low.
 *
 * The rate is a token bucket per tenant: `createsPerSecond` tokens a
 * second, holding at most max(1, rate); a start of n sandboxes needs
 * min(n, burst) tokens and takes n (the bucket may go below zero, so a big
 * batch delays the next ones). A refusal is `TENANT_QUOTA_EXCEEDED` (429)
 * with `fields.retryAfterSeconds`: for the rate, when enough tokens will be
 * there; for the others, {@link CONCURRENCY_RETRY_SECONDS}.
 *
 * @module
 */
import { AenvError, type TenantQuotas, type TenantUsage } from '@aenv/shared';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { SandboxRecord } from '../orchestrator/sandbox.js';
import type { TenantStore } from '../store/tenant-store.js';
import { ownerOf } from './tenant-access.js';

/** What a refused concurrency quota suggests waiting (something must end first). */
export const CONCURRENCY_RETRY_SECONDS = 5;

/** What one start asks for. */
export interface QuotaDemand {
  /** Sandboxes that will exist in addition (0 for a resume). */
  readonly sandboxes: number;
  readonly vcpus: number;
  readonly memoryMB: number;
  /** Creates counted by the rate quota (0 for a resume). */
  readonly creates: number;
}

/** What the guard reads. */
export interface QuotaSources {
  /** A tenant's quotas (absent or 0 = unlimited). */
  readonly quotasOf: (tenant: string) => TenantQuotas;
  /** What a tenant's existing sandboxes use (not counting starts in flight). */
  readonly usageOf: (tenant: string) => TenantUsage;
  /** Milliseconds clock. @default Date.now */
  readonly now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Checks and reserves tenant quotas. */
export class TenantQuotaGuard {
  readonly #o: QuotaSources;
  readonly #inflight = new Map<string, TenantUsage>();
  readonly #buckets = new Map<string, Bucket>();

  constructor(o: QuotaSources) {
    this.#o = o;
  }

  /** What a tenant uses, starts in flight included. */
  usage(tenant: string): TenantUsage {
    const u = this.#o.usageOf(tenant);
    const f = this.#inflight.get(tenant);
    if (f === undefined) return u;
    return {
      sandboxes: u.sandboxes + f.sandboxes,
      vcpus: u.vcpus + f.vcpus,
      memoryMB: u.memoryMB + f.memoryMB,
    };
  }

  /**
   * Runs a start under a reservation of `demand` for `tenant`.
   * @throws {AenvError} `TENANT_QUOTA_EXCEEDED` (before `start` runs); what `start` throws.
   */
  async run<T>(tenant: string, demand: QuotaDemand, start: () => Promise<T>): Promise<T> {
    const release = this.reserve(tenant, demand);
    try {
      return await start();
    } finally {
      release();
    }
  }

  /**
   * Checks `demand` against the quotas and reserves it.
   * @returns the release (call it once the start ended, however).
   * @throws {AenvError} `TENANT_QUOTA_EXCEEDED`.
   */
  reserve(tenant: string, demand: QuotaDemand): () => void {
    const q = this.#o.quotasOf(tenant);
    const use = this.usage(tenant);
    over(tenant, 'maxSandboxes', q.maxSandboxes, use.sandboxes, demand.sandboxes);
    over(tenant, 'maxVcpus', q.maxVcpus, use.vcpus, demand.vcpus);
    over(tenant, 'maxMemoryMB', q.maxMemoryMB, use.memoryMB, demand.memoryMB);
    this.#takeTokens(tenant, q.createsPerSecond, demand.creates);
    const f = this.#inflight.get(tenant) ?? { sandboxes: 0, vcpus: 0, memoryMB: 0 };
    this.#inflight.set(tenant, add(f, demand, 1));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = add(this.#inflight.get(tenant) ?? f, demand, -1);
      if (now.sandboxes <= 0 && now.vcpus <= 0 && now.memoryMB <= 0) this.#inflight.delete(tenant);
      else this.#inflight.set(tenant, now);
    };
  }

  #takeTokens(tenant: string, rate: number | undefined, n: number): void {
    if (rate === undefined || rate <= 0 || n <= 0) return;
    const burst = Math.max(1, rate);
    const now = (this.#o.now ?? Date.now)();
    const b = this.#buckets.get(tenant) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    this.#buckets.set(tenant, b);
    const need = Math.min(n, burst);
    if (b.tokens < need) {
      const wait = Math.max(1, Math.ceil((need - b.tokens) / rate));
      throw exceeded(
        tenant,
        `createsPerSecond: limit ${rate}/s (burst ${burst}), asked ${n}`,
        wait,
        'createsPerSecond',
      );
    }
    b.tokens -= n;
  }
}

function add(a: TenantUsage, d: QuotaDemand, sign: 1 | -1): TenantUsage {
  return {
    sandboxes: a.sandboxes + sign * d.sandboxes,
    vcpus: a.vcpus + sign * d.vcpus,
    memoryMB: a.memoryMB + sign * d.memoryMB,
  };
}

function over(
  tenant: string,
  name: keyof TenantQuotas,
  limit: number | undefined,
  used: number,
  asked: number,
): void {
  if (limit === undefined || limit <= 0 || asked <= 0 || used + asked <= limit) return;
  throw exceeded(
    tenant,
    `${name}: limit ${limit}, in use ${used}, asked ${asked}`,
    CONCURRENCY_RETRY_SECONDS,
    name,
  );
}

function exceeded(tenant: string, what: string, retry: number, quota: string): AenvError {
  return new AenvError('TENANT_QUOTA_EXCEEDED', `tenant '${tenant}' is over its quota ${what}`, {
    fields: { tenant, quota, retryAfterSeconds: retry },
  });
}

/**
 * What `tenant`'s sandboxes among `records` use: all count as sandboxes,
 * running ones' shape too. A sandbox still `creating` is left out (its
 * start's reservation counts it), and so is the shape of one `resuming`
 * (likewise): counting both would refuse a start that fits while another
 * is under way.
 */
export function usageOfRecords(records: readonly SandboxRecord[], tenant: string): TenantUsage {
  let sandboxes = 0;
  let vcpus = 0;
  let memoryMB = 0;
  for (const r of records) {
    if (ownerOf(r) !== tenant || r.state === 'creating') continue;
    sandboxes++;
    if (r.state === 'paused' || r.state === 'pausing' || r.state === 'resuming') continue;
    vcpus += r.vcpus;
    memoryMB += r.memoryMiB;
  }
  return { sandboxes, vcpus, memoryMB };
}

/** The guard of a node: quotas from its tenant store, usage from its orchestrator's sandboxes. */
export function nodeQuotaGuard(tenants: TenantStore, orchestrator: Orchestrator): TenantQuotaGuard {
  return new TenantQuotaGuard({
    quotasOf: (t) => tenants.quotasOf(t),
    usageOf: (t) => usageOfRecords(orchestrator.list(), t),
  });
}
