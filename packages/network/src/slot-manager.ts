/**
 * `SlotManager`: a node's network slots: reclaim at start, a pool of
 * pre-built slots, acquire with a policy, policy replacement, release with
 * scrubbing, and close.
 *
 * Concurrency: operations on one slot run one after another (acquire's
 * policy, `applyPolicy`, `release`); different slots proceed in parallel.
 * `close` refuses new work, waits for work in flight, then destroys pooled
 * slots and (unless `keepInUse`) slots still leased and the host table.
 *
 * Crash safety: nothing about a slot lives only in this process. A new
 * manager with the same prefix finds every leftover by name; the daemon
 * passes the `SlotRecord`s of sandboxes it still runs as `adopt` and every
 * other leftover is removed (`reclaim.ts`).
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import { CommandRunner } from './command-runner.js';
import {
  DEFAULT_EGRESS_POLICY,
  DENY_ALL_EGRESS_POLICY,
  checkEgressPolicy,
  type EgressPolicy,
} from './egress-policy.js';
import { publish, publishError } from './events.js';
import { HostNetwork, type ConntrackScope } from './host-network.js';
import {
  resolveNetworkSettings,
  usableNameservers,
  type NetworkConfig,
  type NetworkSettings,
} from './network-config.js';
import { IndexAllocator } from './index-allocator.js';
import { reclaim, type ReclaimResult } from './reclaim.js';
import { NETNS_DIR } from './slot-addressing.js';
import { SlotLease, SlotResource, type Slot, type SlotRecord } from './slot.js';
import { SlotPool } from './slot-pool.js';
import { PrefixLock } from './prefix-lock.js';

/** Options of {@link SlotManager.start}. */
export interface SlotManagerOptions {
  /** The loaded `network` config section. */
  readonly config: NetworkConfig;
  /**
   * A named network namespace (under /run/netns) to operate in instead of
   * the caller's own: the "host" side of every slot. Tests use it to keep
   * everything inside a namespace they created.
   */
  readonly netns?: string;
  /** Slots of a previous run to keep (the daemon's records); all other leftovers are removed. */
  readonly adopt?: readonly SlotRecord[];
  /** Files searched for a nameserver when `dnsServer` is `auto`. */
  readonly resolvConfPaths?: readonly string[];
  /** How long to wait for the prefix lock (see `prefix-lock.ts`). Default 40 s. */
  readonly lockWaitMs?: number;
}

/** Options of {@link SlotManager.acquire}. */
export interface AcquireOptions {
  /** For events only. */
  readonly sandboxId?: string;
}

/** Options of {@link SlotManager.close}. */
export interface CloseOptions {
  /**
   * Leave leased slots and the host table in place (for a daemon that
   * restarts while its VMs keep running, and re-adopts them). Default false.
   */
  readonly keepInUse?: boolean;
}

/** A snapshot of the manager's counters. */
export interface SlotManagerStats {
  readonly ready: number;
  readonly building: number;
  readonly inUse: number;
  readonly capacity: number;
}

const RESOLV_CONF_PATHS = ['/etc/resolv.conf', '/run/systemd/resolve/resolv.conf'];

/** Manages one node's network slots. */
export class SlotManager {
  readonly #settings: NetworkSettings;
  readonly #host: HostNetwork;
  readonly #allocator: IndexAllocator;
  readonly #pool: SlotPool;
  readonly #leases = new Map<SlotLease, SlotResource>();
  readonly #inflight = new Set<Promise<unknown>>();
  readonly #lock: PrefixLock;
  #closing: Promise<void> | undefined;
  /** Slots re-adopted from a previous run at start, leased to the caller. */
  readonly adopted: readonly Slot[];
  /** Indices the caller asked to adopt that were gone or broken. */
  readonly lost: readonly number[];
  /** The resolver guests' DNS goes to, if any. */
  readonly dnsServer: string | undefined;

  private constructor(
    settings: NetworkSettings,
    host: HostNetwork,
    dns: string | undefined,
    reclaimed: ReclaimResult,
    lock: PrefixLock,
  ) {
    this.#lock = lock;
    this.#settings = settings;
    this.#host = host;
    this.dnsServer = dns;
    this.#allocator = new IndexAllocator(settings.capacity);
    this.#pool = new SlotPool({
      low: settings.poolLow,
      high: settings.poolHigh,
      build: (count) => this.#build(count, 'pool'),
      onError: (err) => publishError('pool-refill', err),
    });
    for (const r of reclaimed.adopted) this.#allocator.reserve(r.index);
    this.adopted = reclaimed.adopted.map((r) =>
      this.#lease(new SlotResource(r.index, r.policy, false)),
    );
    this.lost = reclaimed.lost;
  }

  /**
   * Takes the prefix lock, reclaims leftovers of a previous run, installs
   * the host table and starts filling the pool.
   * @throws {AenvError} `CONFIG_INVALID_VALUE`, `NET_PREFIX_IN_USE`, `NET_COMMAND_FAILED`.
   */
  static async start(options: SlotManagerOptions): Promise<SlotManager> {
    const settings = resolveNetworkSettings(options.config);
    const netns = options.netns === undefined ? undefined : `${NETNS_DIR}/${options.netns}`;
    const dns = await resolveDnsServer(
      settings.dnsServer,
      options.resolvConfPaths ?? RESOLV_CONF_PATHS,
    );
    const adopt = (options.adopt ?? []).map((r) => ({
      index: r.index,
      policy: checkEgressPolicy(r.policy),
    }));
    const lock = await PrefixLock.acquire(settings.lockDir, settings.prefix, options.lockWaitMs);
    try {
      const host = new HostNetwork(settings, new CommandRunner(netns, () => lock.fd), dns);
      await host.prepare();
      const result = await reclaim(host, adopt, settings.capacity);
      const manager = new SlotManager(settings, host, dns, result, lock);
      manager.#pool.kick();
      return manager;
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /** Counters, for metrics and tests. */
  stats(): SlotManagerStats {
    return {
      ready: this.#pool.ready,
      building: this.#pool.building,
      inUse: this.#leases.size,
      capacity: this.#settings.capacity,
    };
  }

  /**
   * Hands out a slot with `policy` in force: a pooled one when ready, else a
   * freshly built one.
   * @throws {AenvError} `NET_POOL_EXHAUSTED`, `NET_MANAGER_CLOSED`,
   *   `NET_POLICY_INVALID`, `NET_COMMAND_FAILED`.
   */
  acquire(
    policy: EgressPolicy = DEFAULT_EGRESS_POLICY,
    options: AcquireOptions = {},
  ): Promise<Slot> {
    return this.#track(this.#acquire(checkEgressPolicy(policy), options));
  }

  /**
   * Replaces a leased slot's egress policy atomically: established flows the
   * new policy allows continue; flows it denies stop at their next packet.
   * @throws {AenvError} `NET_SLOT_RELEASED`, `NET_POLICY_INVALID`, `NET_COMMAND_FAILED`.
   */
  applyPolicy(slot: Slot, policy: EgressPolicy): Promise<void> {
    const checked = checkEgressPolicy(policy);
    const res = this.#leases.get(slot as SlotLease);
    if (res === undefined) return Promise.reject(released(slot));
    return this.#track(
      res.serialize(async () => {
        if (this.#leases.get(slot as SlotLease) !== res) throw released(slot);
        const t0 = performance.now();
        await this.#host.applyPolicy(res.index, checked, res.pristine);
        res.policy = checked;
        res.pristine = false;
        publish('policyApply', {
          [LOG_FIELDS.slotId]: res.index,
          [LOG_FIELDS.durationMs]: elapsed(t0),
        });
      }),
    );
  }

  /**
   * Gives a slot back. The caller must have stopped the VM using it. The slot
   * is scrubbed (deny-all, fresh tap, no conntrack state) into the pool, or
   * destroyed when the pool is full. Releasing twice is a no-op.
   * @throws {AenvError} `NET_COMMAND_FAILED` when the slot could not be
   *   destroyed (its index stays quarantined).
   */
  release(slot: Slot): Promise<void> {
    const res = this.#leases.get(slot as SlotLease);
    if (res === undefined) return Promise.resolve();
    this.#leases.delete(slot as SlotLease);
    (slot as SlotLease).detach();
    return this.#track(res.serialize(() => this.#recycle(res)));
  }

  /**
   * Stops the pool and removes the node's slots (see {@link CloseOptions}).
   * Idempotent.
   */
  close(options: CloseOptions = {}): Promise<void> {
    this.#closing ??= this.#close(options.keepInUse ?? false);
    return this.#closing;
  }

  async #acquire(policy: EgressPolicy, options: AcquireOptions): Promise<Slot> {
    this.#assertOpen();
    const t0 = performance.now();
    let res = this.#pool.take();
    const stage = res === undefined ? 'cold' : 'pool';
    if (res === undefined) {
      res = (await this.#build(1, 'cold'))[0];
      if (res === undefined) {
        throw new AenvError(
          'NET_POOL_EXHAUSTED',
          `all ${this.#settings.capacity} slots are in use`,
        );
      }
    }
    const resource = res;
    try {
      await resource.serialize(async () => {
        await this.#host.applyPolicy(resource.index, policy, resource.pristine);
        resource.policy = policy;
        resource.pristine = false;
      });
      this.#assertOpen();
    } catch (err) {
      await this.#destroy([resource], 'failed-acquire').catch((e: unknown) =>
        publishError('destroy', e),
      );
      throw err;
    }
    const lease = this.#lease(resource);
    publish('slotAcquire', {
      [LOG_FIELDS.slotId]: resource.index,
      [LOG_FIELDS.stage]: stage,
      [LOG_FIELDS.durationMs]: elapsed(t0),
      [LOG_FIELDS.sandboxId]: options.sandboxId,
    });
    return lease;
  }

  async #recycle(res: SlotResource): Promise<void> {
    const t0 = performance.now();
    const room =
      this.#closing === undefined &&
      this.#pool.ready + this.#pool.building < this.#settings.poolHigh;
    if (room) {
      try {
        await this.#host.scrub(res.index);
        res.policy = DENY_ALL_EGRESS_POLICY;
        res.pristine = true;
        if (this.#pool.offer(res)) {
          publishRelease(res.index, 'pooled', t0);
          return;
        }
      } catch (err) {
        publishError('scrub', err, [res.index]);
      }
    }
    await this.#destroy([res], 'release');
    publishRelease(res.index, 'destroyed', t0);
  }

  async #build(count: number, stage: 'pool' | 'cold'): Promise<SlotResource[]> {
    const indices = this.#allocator.take(count);
    if (indices.length === 0) return [];
    const t0 = performance.now();
    try {
      await this.#host.build(indices);
    } catch (err) {
      await this.#releaseIndicesExceptLeftovers(indices);
      throw err;
    }
    publish('slotBuild', {
      [LOG_FIELDS.slotId]: indices,
      [LOG_FIELDS.stage]: stage,
      [LOG_FIELDS.durationMs]: elapsed(t0),
    });
    return indices.map((i) => new SlotResource(i, DENY_ALL_EGRESS_POLICY, true));
  }

  async #destroy(
    resources: readonly SlotResource[],
    stage: string,
    conntrack: ConntrackScope = 'slots',
  ): Promise<void> {
    const indices = resources.map((r) => r.index);
    if (indices.length === 0) return;
    try {
      await this.#host.destroy(indices, conntrack);
    } catch (err) {
      await this.#releaseIndicesExceptLeftovers(indices);
      throw err;
    }
    for (const i of indices) this.#allocator.release(i);
    publish('slotDestroy', { [LOG_FIELDS.slotId]: indices, [LOG_FIELDS.stage]: stage });
    this.#pool.kick();
  }

  /** After a failure, frees the indices whose objects are all gone; the rest stay quarantined. */
  async #releaseIndicesExceptLeftovers(indices: readonly number[]): Promise<void> {
    const left = new Set(await this.#host.discover().catch(() => indices));
    for (const i of indices) if (!left.has(i)) this.#allocator.release(i);
  }

  async #close(keepInUse: boolean): Promise<void> {
    try {
      await this.#teardown(keepInUse);
    } finally {
      this.#lock.release();
    }
  }

  async #teardown(keepInUse: boolean): Promise<void> {
    const pooled = await this.#pool.close();
    await Promise.allSettled([...this.#inflight]);
    const errors: unknown[] = [];
    if (keepInUse) {
      await this.#destroy(pooled, 'close').catch((e: unknown) => errors.push(e));
    } else {
      const all = [...pooled, ...this.#leases.values()];
      for (const lease of this.#leases.keys()) lease.detach();
      this.#leases.clear();
      await this.#destroy(all, 'close', 'pool').catch((e: unknown) => errors.push(e));
      await this.#host.removeTable().catch((e: unknown) => errors.push(e));
    }
    if (errors.length > 0) {
      throw new AenvError('NET_COMMAND_FAILED', 'closing the slot manager left slots behind', {
        cause: new AggregateError(errors),
      });
    }
  }

  #lease(res: SlotResource): Slot {
    const lease = new SlotLease(res, this.#host.addressing);
    this.#leases.set(lease, res);
    return lease;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new AenvError('NET_MANAGER_CLOSED', 'the slot manager is closed');
    }
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.#inflight.add(p);
    const untrack = (): void => {
      this.#inflight.delete(p);
    };
    p.then(untrack, untrack);
    return p;
  }
}

function released(slot: Slot): AenvError {
  return new AenvError('NET_SLOT_RELEASED', `slot ${slot.index} was released`, {
    fields: { slot: slot.index },
  });
}

function elapsed(t0: number): number {
  return Math.round((performance.now() - t0) * 1000) / 1000;
}

function publishRelease(index: number, stage: string, t0: number): void {
  publish('slotRelease', {
    [LOG_FIELDS.slotId]: index,
    [LOG_FIELDS.stage]: stage,
    [LOG_FIELDS.durationMs]: elapsed(t0),
  });
}

async function resolveDnsServer(
  setting: string,
  paths: readonly string[],
): Promise<string | undefined> {
  if (setting === 'none') return undefined;
  if (setting !== 'auto') return setting;
  for (const path of paths) {
    const text = await readFile(path, 'utf8').catch(() => '');
    const first = usableNameservers(text)[0];
    if (first !== undefined) return first;
  }
  return undefined;
}
