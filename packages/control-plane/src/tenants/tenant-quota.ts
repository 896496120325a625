/**
 * Tenant quotas enforced at the gateway, across every replica, by one Lua
 * script in Redis: a create first reserves its sandboxes, vCPUs and memory
 * and spends create tokens, atomically, so concurrent creates through any
 * number of replicas never pass a quota. The reservation is released once
 * the create has bound its sandboxes (they then count through their
 * bindings) or has failed; a reservation a crashed gateway left behind
 * expires after `reservationTtlMs`.
 *
 * Usage is what the bindings say: every sandbox in the tenant's set counts
 * for `maxSandboxes`; the `vcpus`/`memoryMB` of the bindings not `paused`
 * count for `maxVcpus`/`maxMemoryMB` (a sandbox bound without a shape, made
 * directly on a node, counts 0 there). `createsPerSecond` is a token bucket
 * holding one second of creates (at least one); a batch larger than that
 * passes only with a full bucket and leaves it in debt.
 *
 * Keys: `tenant:<id>:reserved` (sorted set of reservations, scored by
 * expiry) and `tenant:<id>:rate` (the bucket), under the cluster prefix.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AenvError, type TenantQuotas, type TenantUsage } from '@aenv/shared';
import { stateUnavailable } from '../state/redis-connection.js';

/** What a create asks for, in total. */
export interface QuotaAsk {
  readonly count: number;
  readonly vcpus: number;
  readonly memoryMB: number;
}

/** A held reservation. */
export interface Reservation {
  /** Gives the reservation back (idempotent). */
  release(): Promise<void>;
}

/** What a {@link TenantQuotaGate} runs on. */
export interface TenantQuotaGateOptions {
  readonly redis: Redis;
  readonly prefix: string;
  /** The quotas in force for a tenant. */
  readonly quotasOf: (tenant: string) => Promise<TenantQuotas>;
  /** @default 660 000 (the longest create plus a minute) */
  readonly reservationTtlMs?: number;
}

/** Seconds a client is told to wait when a concurrency quota is full. */
const FULL_RETRY_SECONDS = 5;

const RESERVE_SCRIPT = `
local now = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local n, v, m = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local rn, rv, rm = 0, 0, 0
for _, e in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local a, b, c = string.match(e, ':(%d+):(%d+):(%d+)$')
  rn = rn + tonumber(a); rv = rv + tonumber(b); rm = rm + tonumber(c)
end
local maxS, maxV, maxM = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
if maxS > 0 then
  local used = redis.call('SCARD', KEYS[1]) + rn
  if used + n > maxS then return {1, 'maxSandboxes', maxS, used, 0} end
end
if maxV > 0 or maxM > 0 then
  local uv, um = rv, rm
  for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    local h = redis.call('HMGET', ARGV[1] .. id, 'state', 'vcpus', 'memoryMB')
    if h[1] ~= 'paused' then
      uv = uv + (tonumber(h[2]) or 0)
      um = um + (tonumber(h[3]) or 0)
    end
  end
  if maxV > 0 and uv + v > maxV then return {1, 'maxVcpus', maxV, uv, 0} end
  if maxM > 0 and um + m > maxM then return {1, 'maxMemoryMB', maxM, um, 0} end
end
local rate = tonumber(ARGV[9])
if rate > 0 then
  local cap = math.max(rate, 1)
  local st = redis.call('HMGET', KEYS[3], 'tokens', 'at')
  local tokens = tonumber(st[1]) or cap
  local at = tonumber(st[2]) or now
  tokens = math.min(cap, tokens + math.max(0, now - at) * rate / 1000)
  local need = math.min(n, cap)
  if tokens < need then
    return {1, 'createsPerSecond', ARGV[9], 0, math.ceil((need - tokens) * 1000 / rate)}
  end
  redis.call('HSET', KEYS[3], 'tokens', tostring(tokens - n), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[3], math.ceil((cap + n) * 1000 / rate) + 1000)
end
local ttl = tonumber(ARGV[11])
redis.call('ZADD', KEYS[2], now + ttl, ARGV[10] .. ':' .. n .. ':' .. v .. ':' .. m)
redis.call('PEXPIRE', KEYS[2], ttl)
return {0}
`;

/** Reserves creates against tenant quotas. */
export class TenantQuotaGate {
  readonly #o: TenantQuotaGateOptions;

  constructor(options: TenantQuotaGateOptions) {
    this.#o = options;
  }

  /**
   * Reserves `ask` for `tenant`.
   * @throws {AenvError} `TENANT_QUOTA_EXCEEDED` (with `retryAfterSeconds`),
   *   `CLUSTER_STATE_UNAVAILABLE`.
   */
  async reserve(tenant: string, ask: QuotaAsk): Promise<Reservation> {
    const q = await this.#o.quotasOf(tenant);
    const p = this.#o.prefix;
    const token = randomUUID();
    const member = `${token}:${ask.count}:${ask.vcpus}:${ask.memoryMB}`;
    const reserved = `${p}tenant:${tenant}:reserved`;
    const answer = (await this.#run(() =>
      this.#o.redis.eval(
        RESERVE_SCRIPT,
        3,
        `${p}tenant:${tenant}:sandboxes`,
        reserved,
        `${p}tenant:${tenant}:rate`,
        `${p}sandbox:`,
        Date.now(),
        ask.count,
        Math.ceil(ask.vcpus),
        Math.ceil(ask.memoryMB),
        q.maxSandboxes ?? 0,
        q.maxVcpus ?? 0,
        q.maxMemoryMB ?? 0,
        q.createsPerSecond ?? 0,
        token,
        this.#o.reservationTtlMs ?? 660_000,
      ),
    )) as [number, string?, number?, number?, number?];
    if (answer[0] !== 0) throw exceeded(tenant, ask, answer);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        await this.#run(() => this.#o.redis.zrem(reserved, member)).catch(() => undefined);
      },
    };
  }

  /** What a tenant uses now, from its bindings. */
  async usage(tenant: string): Promise<TenantUsage> {
    const p = this.#o.prefix;
    return this.#run(async () => {
      const ids = await this.#o.redis.smembers(`${p}tenant:${tenant}:sandboxes`);
      const pipe = this.#o.redis.pipeline();
      for (const id of ids) pipe.hmget(`${p}sandbox:${id}`, 'state', 'vcpus', 'memoryMB');
      const rows = ((await pipe.exec()) ?? []).map((r) => r[1] as (string | null)[]);
      let vcpus = 0;
      let memoryMB = 0;
      for (const [state, v, m] of rows) {
        if (state === 'paused') continue;
        vcpus += Number(v) || 0;
        memoryMB += Number(m) || 0;
      }
      return { sandboxes: ids.length, vcpus, memoryMB };
    });
  }

  async #run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw stateUnavailable(err);
    }
  }
}

function exceeded(
  tenant: string,
  ask: QuotaAsk,
  answer: readonly [number, string?, number?, number?, number?],
): AenvError {
  const [, quota = 'quota', limit = 0, used = 0, waitMs = 0] = answer;
  const retryAfterSeconds =
    quota === 'createsPerSecond' ? Math.max(1, Math.ceil(waitMs / 1000)) : FULL_RETRY_SECONDS;
  const asked =
    quota === 'maxVcpus' ? ask.vcpus : quota === 'maxMemoryMB' ? ask.memoryMB : ask.count;
  const message =
    quota === 'createsPerSecond'
      ? `tenant '${tenant}' passed its quota createsPerSecond=${limit}; retry in ${retryAfterSeconds} s`
      : `tenant '${tenant}' passed its quota ${quota}=${limit} (limit): it uses ${used} and asked for ${asked} more`;
  return new AenvError('TENANT_QUOTA_EXCEEDED', message, {
    fields: { tenant, quota, limit: Number(limit), used, retryAfterSeconds },
  });
}
