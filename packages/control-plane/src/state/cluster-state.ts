/**
 * The cluster state in Redis as the gateway and scheduler use it: nodes
 * (live reports, lost ones, admin status), sandbox → node bindings, tenant
 * sets, recent placements, the shared template catalog, build and snapshot
 * bindings, and leases. Key layout: `@aenv/shared` `cluster-wire.ts`.
 *
 * Every method turns a Redis failure into `CLUSTER_STATE_UNAVAILABLE`.
 * Nothing here is cached: several gateway replicas share the state, and a
 * restarted one loses nothing.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  clusterKeys,
  DEFAULT_CLUSTER_KEY_PREFIX,
  type ClusterKeys,
  type NodeAdmin,
  type NodeReport,
  type NodeStatus,
  type SandboxBinding,
  type SharedTemplate,
} from '@aenv/shared';
import {
  NO_PENDING,
  indexTemplates,
  statusOf,
  type ClusterNode,
  type PendingUse,
} from './cluster-node.js';
import { stateUnavailable } from './redis-connection.js';

/** How long a placement counts as pending when its node's report is older. */
const PENDING_WINDOW_MS = 120_000;

const UNLOCK_SCRIPT =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** A binding to write. */
export interface NewBinding {
  readonly node: string;
  readonly tenant: string;
  readonly state: 'running' | 'paused';
  readonly templateId?: string | undefined;
  /** Its shape, counted against its tenant's vCPU and memory quotas. */
  readonly vcpus?: number | undefined;
  readonly memoryMB?: number | undefined;
}

/** Typed access to the cluster state. */
export class ClusterState {
  readonly redis: Redis;
  readonly keys: ClusterKeys;
  /** The prefix of every key. */
  readonly prefix: string;

  constructor(redis: Redis, prefix: string = DEFAULT_CLUSTER_KEY_PREFIX) {
    this.redis = redis;
    this.prefix = prefix;
    this.keys = clusterKeys(prefix);
  }

  /** Every registered node, alive or lost, sorted by id. */
  async nodes(): Promise<ClusterNode[]> {
    return this.#run(async () => {
      const ids = (await this.redis.smembers(this.keys.nodes)).sort();
      if (ids.length === 0) return [];
      const pipe = this.redis.pipeline();
      for (const id of ids) {
        pipe.get(this.keys.node(id));
        pipe.get(this.keys.nodeLast(id));
        pipe.get(this.keys.nodeAdmin(id));
        pipe.scard(this.keys.nodeSandboxes(id));
        pipe.zrangebyscore(
          this.keys.nodePending(id),
          Date.now() - PENDING_WINDOW_MS,
          '+inf',
          'WITHSCORES',
        );
      }
      const res = (await pipe.exec()) ?? [];
      const out: ClusterNode[] = [];
      ids.forEach((id, i) => {
        const at = (k: number): unknown => res[i * 5 + k]?.[1];
        const node = toClusterNode(id, {
          live: at(0) as string | null,
          last: at(1) as string | null,
          admin: at(2) as string | null,
          bound: Number(at(3) ?? 0),
          pending: (at(4) as string[] | undefined) ?? [],
        });
        if (node !== undefined) out.push(node);
      });
      return out;
    });
  }

  /** One node, or undefined when it never registered. */
  async node(id: string): Promise<ClusterNode | undefined> {
    return (await this.nodes()).find((n) => n.id === id);
  }

  /** Sets the status an operator chose for a node (nodes apply it at their next heartbeat). */
  async setNodeStatus(id: string, status: NodeStatus): Promise<void> {
    const admin: NodeAdmin = { status, at: new Date().toISOString() };
    await this.#run(() => this.redis.set(this.keys.nodeAdmin(id), JSON.stringify(admin)));
  }

  /** Forgets a node entirely (its bindings stay: the scheduler drops them). */
  async removeNode(id: string): Promise<void> {
    await this.#run(() =>
      this.redis
        .multi()
        .srem(this.keys.nodes, id)
        .del(this.keys.node(id), this.keys.nodeLast(id), this.keys.nodeAdmin(id))
        .del(this.keys.nodePending(id))
        .exec(),
    );
  }

  /** Records a placement on `node` (counted until its next report). */
  async addPending(node: string, use: { vcpus: number; memoryMiB: number }): Promise<string> {
    const token = `${randomUUID()}:${use.vcpus}:${use.memoryMiB}`;
    const key = this.keys.nodePending(node);
    await this.#run(() =>
      this.redis
        .multi()
        .zadd(key, Date.now(), token)
        .zremrangebyscore(key, '-inf', Date.now() - PENDING_WINDOW_MS)
        .pexpire(key, PENDING_WINDOW_MS)
        .exec(),
    );
    return token;
  }

  /** Drops a placement that failed (a successful one stays until the report covers it). */
  async dropPending(node: string, token: string): Promise<void> {
    await this.#run(() => this.redis.zrem(this.keys.nodePending(node), token));
  }

  /** The binding of a sandbox, or undefined. */
  async binding(id: string): Promise<SandboxBinding | undefined> {
    const h = await this.#run(() => this.redis.hgetall(this.keys.sandbox(id)));
    return typeof h.node === 'string' && h.node !== ''
      ? (h as unknown as SandboxBinding)
      : undefined;
  }

  /** Bindings of many sandboxes at once (missing ones are absent from the map). */
  async bindings(ids: readonly string[]): Promise<Map<string, SandboxBinding>> {
    const out = new Map<string, SandboxBinding>();
    if (ids.length === 0) return out;
    await this.#run(async () => {
      const pipe = this.redis.pipeline();
      for (const id of ids) pipe.hgetall(this.keys.sandbox(id));
      const res = (await pipe.exec()) ?? [];
      ids.forEach((id, i) => {
        const h = res[i]?.[1] as Record<string, string> | undefined;
        if (h?.node !== undefined) out.set(id, h as unknown as SandboxBinding);
      });
    });
    return out;
  }

  /** Binds a new sandbox to its node (and its tenant). */
  async bind(id: string, b: NewBinding): Promise<void> {
    const fields: Record<string, string> = {
      node: b.node,
      tenant: b.tenant,
      state: b.state,
      updatedAt: new Date().toISOString(),
      ...(b.templateId === undefined ? {} : { templateId: b.templateId }),
      ...(b.vcpus === undefined ? {} : { vcpus: String(b.vcpus) }),
      ...(b.memoryMB === undefined ? {} : { memoryMB: String(b.memoryMB) }),
    };
    await this.#run(() =>
      this.redis
        .multi()
        .hset(this.keys.sandbox(id), fields)
        .sadd(this.keys.nodeSandboxes(b.node), id)
        .sadd(this.keys.tenantSandboxes(b.tenant), id)
        .exec(),
    );
  }

  /** Moves a binding to another node (a paused sandbox taken over elsewhere). */
  async rebind(id: string, from: string, to: string): Promise<void> {
    await this.#run(() =>
      this.redis
        .multi()
        .hset(this.keys.sandbox(id), { node: to, updatedAt: new Date().toISOString() })
        .srem(this.keys.nodeSandboxes(from), id)
        .sadd(this.keys.nodeSandboxes(to), id)
        .exec(),
    );
  }

  /** Updates fields of an existing binding. */
  async updateBinding(id: string, fields: Readonly<Record<string, string>>): Promise<void> {
    await this.#run(() => this.redis.hset(this.keys.sandbox(id), fields));
  }

  /** Removes a sandbox's binding and its set memberships. */
  async unbind(id: string, known?: SandboxBinding): Promise<void> {
    const b = known ?? (await this.binding(id));
    const multi = this.redis.multi().del(this.keys.sandbox(id), this.keys.sandboxMove(id));
    if (b !== undefined) multi.srem(this.keys.nodeSandboxes(b.node), id);
    if (b?.tenant !== undefined) multi.srem(this.keys.tenantSandboxes(b.tenant), id);
    await this.#run(() => multi.exec());
  }

  /**
   * Replaces a binding with a tombstone naming `node` for a week: a node
   * that comes back with its own copy drops it.
   */
  async tombstone(id: string, node: string, known?: SandboxBinding): Promise<void> {
    await this.unbind(id, known);
    await this.#run(() =>
      this.redis
        .multi()
        .hset(this.keys.sandbox(id), { node, updatedAt: new Date().toISOString() })
        .expire(this.keys.sandbox(id), 7 * 86_400)
        .exec(),
    );
  }

  /** Ids of the sandboxes bound to a node. */
  async nodeSandboxes(node: string): Promise<string[]> {
    return this.#run(() => this.redis.smembers(this.keys.nodeSandboxes(node)));
  }

  /** How many sandboxes a tenant has. */
  async tenantCount(tenant: string): Promise<number> {
    return this.#run(() => this.redis.scard(this.keys.tenantSandboxes(tenant)));
  }

  /** Ids of a tenant's sandboxes. */
  async tenantSandboxes(tenant: string): Promise<string[]> {
    return this.#run(() => this.redis.smembers(this.keys.tenantSandboxes(tenant)));
  }

  /** The shared template catalog. */
  async templates(): Promise<SharedTemplate[]> {
    const h = await this.#run(() => this.redis.hgetall(this.keys.templates));
    return Object.values(h).flatMap((v) => {
      try {
        return [JSON.parse(v) as SharedTemplate];
      } catch {
        return [];
      }
    });
  }

  /** Removes a template from the shared catalog (nodes delete their copies). */
  async removeTemplate(id: string): Promise<void> {
    await this.#run(() => this.redis.hdel(this.keys.templates, id));
  }

  /** Routes a template's build requests to `node` for a day. */
  async setTemplateBuilder(id: string, node: string): Promise<void> {
    await this.#run(() => this.redis.set(this.keys.templateBuilder(id), node, 'EX', 86_400));
  }

  /** The node building a template, if any. */
  async templateBuilder(id: string): Promise<string | undefined> {
    return (await this.#run(() => this.redis.get(this.keys.templateBuilder(id)))) ?? undefined;
  }

  /** Records the node a user snapshot lives on. */
  async bindSnapshot(id: string, node: string): Promise<void> {
    await this.#run(() => this.redis.set(this.keys.snapshot(id), node));
  }

  /** The node of a user snapshot, if known. */
  async snapshotNode(id: string): Promise<string | undefined> {
    return (await this.#run(() => this.redis.get(this.keys.snapshot(id)))) ?? undefined;
  }

  /** Forgets a user snapshot's node. */
  async unbindSnapshot(id: string): Promise<void> {
    await this.#run(() => this.redis.del(this.keys.snapshot(id)));
  }

  /** Takes a lease; returns its token, or undefined when someone holds it. */
  async lock(name: string, ttlMs: number): Promise<string | undefined> {
    const token = randomUUID();
    const ok = await this.#run(() =>
      this.redis.set(this.keys.lock(name), token, 'PX', ttlMs, 'NX'),
    );
    return ok === 'OK' ? token : undefined;
  }

  /** Extends a lease we hold; false when it was lost. */
  async renewLock(name: string, token: string, ttlMs: number): Promise<boolean> {
    const key = this.keys.lock(name);
    const holder = await this.#run(() => this.redis.get(key));
    if (holder !== token) return false;
    await this.#run(() => this.redis.pexpire(key, ttlMs));
    return true;
  }

  /** Releases a lease if we still hold it. */
  async unlock(name: string, token: string): Promise<void> {
    await this.#run(() => this.redis.eval(UNLOCK_SCRIPT, 1, this.keys.lock(name), token));
  }

  /** Takes the move lock of a sandbox. */
  async lockMove(id: string, ttlMs: number): Promise<string | undefined> {
    const token = randomUUID();
    const ok = await this.#run(() =>
      this.redis.set(this.keys.sandboxMove(id), token, 'PX', ttlMs, 'NX'),
    );
    return ok === 'OK' ? token : undefined;
  }

  /** Releases the move lock of a sandbox. */
  async unlockMove(id: string, token: string): Promise<void> {
    await this.#run(() => this.redis.eval(UNLOCK_SCRIPT, 1, this.keys.sandboxMove(id), token));
  }

  async #run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw stateUnavailable(err);
    }
  }
}

function parse<T>(text: string | null): T | undefined {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

function toClusterNode(
  id: string,
  raw: {
    live: string | null;
    last: string | null;
    admin: string | null;
    bound: number;
    pending: readonly string[];
  },
): ClusterNode | undefined {
  const live = parse<NodeReport>(raw.live);
  const report = live ?? parse<NodeReport>(raw.last);
  if (report === undefined) return undefined;
  const admin = parse<NodeAdmin>(raw.admin)?.status;
  return {
    id,
    report,
    alive: live !== undefined,
    status: statusOf(live !== undefined, admin, report),
    bound: raw.bound,
    pending: pendingAfter(raw.pending, Date.parse(report.reportedAt)),
    templates: indexTemplates(report.templates),
  };
}

/**
 * Sums the placements made after the report was taken: `withScores` is
 * `[token, time, token, time, ...]`, tokens `uuid:vcpus:memoryMiB`.
 */
function pendingAfter(withScores: readonly string[], reportedAt: number): PendingUse {
  let count = 0;
  let vcpus = 0;
  let memoryMiB = 0;
  for (let i = 0; i + 1 < withScores.length; i += 2) {
    if (Number(withScores[i + 1]) <= reportedAt) continue;
    const [, v, m] = (withScores[i] as string).split(':');
    count++;
    vcpus += Number(v) || 0;
    memoryMiB += Number(m) || 0;
  }
  return count === 0 ? NO_PENDING : { count, vcpus, memoryMiB };
}
