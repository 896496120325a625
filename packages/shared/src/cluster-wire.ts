/**
 * The contract between node daemons and the control plane (gateway,
 * scheduler) of a cluster: the Redis keys both sides read and write, and
 * the JSON documents stored under them. It lives here because nodes
 * (`server`) and the control plane (`control-plane`) may not import each
 * other; neither side may store anything else under the prefix.
 *
 * Keys (all under one prefix, `aenv:` by default):
 *
 * | key                          | type   | written by       | holds                                         |
 * | ---------------------------- | ------ | ---------------- | --------------------------------------------- |
 * | `nodes`                      | set    | node             | ids of every registered node                  |
 * | `node:<id>`                  | string | node (TTL)       | the live {@link NodeReport}; gone = lost      |
 * | `node:<id>:last`             | string | node             | the last report (kept to show lost nodes)     |
 * | `node:<id>:admin`            | string | gateway          | {@link NodeAdmin}: draining or ready          |
 * | `node:<id>:sandboxes`        | set    | gateway, sched.  | ids of the sandboxes bound to the node        |
 * | `node:<id>:pending`          | zset   | gateway (TTL)    | recent placements (token → time), resources   |
 * | `sandbox:<id>`               | hash   | both             | the {@link SandboxBinding}                    |
 * | `sandbox:<id>:move`          | string | gateway (TTL)    | lock while a paused sandbox moves             |
 * | `tenant:<name>:sandboxes`    | set    | gateway, sched.  | ids of a tenant's sandboxes (limits)          |
 * | `templates`                  | hash   | node             | template id → {@link SharedTemplate} JSON     |
 * | `template:<id>:builder`      | string | gateway (TTL)    | the node building a template (build routes)   |
 * | `snapshot:<id>`              | string | gateway          | the node holding a user snapshot              |
 * | `lock:<name>`                | string | any (TTL)        | leases (scheduler loop, base template build)  |
 *
 * @module
 */

/** The key prefix when none is configured. */
export const DEFAULT_CLUSTER_KEY_PREFIX = 'aenv:';

/** Key builders for one prefix. */
export interface ClusterKeys {
  readonly nodes: string;
  node(id: string): string;
  nodeLast(id: string): string;
  nodeAdmin(id: string): string;
  nodeSandboxes(id: string): string;
  nodePending(id: string): string;
  sandbox(id: string): string;
  sandboxMove(id: string): string;
  tenantSandboxes(tenant: string): string;
  readonly templates: string;
  templateBuilder(id: string): string;
  snapshot(id: string): string;
  lock(name: string): string;
}

/** The keys under `prefix`. */
export function clusterKeys(prefix: string = DEFAULT_CLUSTER_KEY_PREFIX): ClusterKeys {
  return {
    nodes: `${prefix}nodes`,
    node: (id) => `${prefix}node:${id}`,
    nodeLast: (id) => `${prefix}node:${id}:last`,
    nodeAdmin: (id) => `${prefix}node:${id}:admin`,
    nodeSandboxes: (id) => `${prefix}node:${id}:sandboxes`,
    nodePending: (id) => `${prefix}node:${id}:pending`,
    sandbox: (id) => `${prefix}sandbox:${id}`,
    sandboxMove: (id) => `${prefix}sandbox:${id}:move`,
    tenantSandboxes: (t) => `${prefix}tenant:${t}:sandboxes`,
    templates: `${prefix}templates`,
    templateBuilder: (id) => `${prefix}template:${id}:builder`,
    snapshot: (id) => `${prefix}snapshot:${id}`,
    lock: (name) => `${prefix}lock:${name}`,
  };
}

/** Whether a node takes new sandboxes (`draining`: no new placements, existing ones stay). */
export type NodeStatus = 'ready' | 'draining';

/** What a node can hold. */
export interface NodeCapacity {
  /** Host CPUs. */
  readonly vcpus: number;
  /** Host memory, MiB. */
  readonly memoryMiB: number;
  /** Disk of the node's state directory, MiB. */
  readonly diskMiB: number;
  /** Most sandboxes with a machine at once (`sandbox.maxSandboxes`). */
  readonly slots: number;
}

/** What a node uses now. */
export interface NodeUsage {
  /** Sandboxes with a machine (creating, running, pausing, resuming, ...). */
  readonly running: number;
  /** Paused sandboxes (no machine; their snapshot only). */
  readonly paused: number;
  /** vCPUs of the sandboxes with a machine. */
  readonly vcpus: number;
  /** Guest memory of the sandboxes with a machine, MiB. */
  readonly memoryMiB: number;
  /** Free disk of the node's state directory, MiB. */
  readonly diskFreeMiB: number;
}

/** A template a node holds. */
export interface NodeTemplate {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly snapshotId: string;
  /** The shape of its sandboxes (placement counts them before they run). */
  readonly vcpus?: number;
  readonly memoryMiB?: number;
}

/** A node's heartbeat: identity, capacity, usage, caches and its sandboxes. */
export interface NodeReport {
  readonly id: string;
  /** Where the node's API and proxy answer (as the gateway reaches it). */
  readonly url: string;
  /** aenv version of the daemon. */
  readonly version: string;
  /** VMM driver kind (`qemu`, `firecracker`) and virtualization mode (`kvm`, `tcg`). */
  readonly driver: string;
  readonly mode: string;
  /**
   * Identity of what snapshots depend on (driver, mode, kernel, initrd and
   * tools image digests): snapshots move only between nodes with the same.
   */
  readonly compat: string;
  /** The status the node applies (its admin status as last read). */
  readonly status: NodeStatus;
  readonly startedAt: string;
  readonly reportedAt: string;
  readonly capacity: NodeCapacity;
  readonly usage: NodeUsage;
  /** Templates the node can create from without fetching anything. */
  readonly templates: readonly NodeTemplate[];
  /** Running sandboxes per template id (their layers and memory are warm in caches). */
  readonly warm: Readonly<Record<string, number>>;
  /** Memory base files (snapshot `memory.baseId`) present on the node. */
  readonly memoryBases: readonly string[];
  /** Every sandbox the node holds, with its state. */
  readonly sandboxes: readonly { readonly id: string; readonly state: string }[];
}

/** The status an operator set for a node. */
export interface NodeAdmin {
  readonly status: NodeStatus;
  readonly at: string;
}

/**
 * Where a sandbox lives. A hash; every field is a string. `export` names
 * the snapshot a paused sandbox was exported to in the shared store (set
 * by its node after the pause, cleared when it runs again): with it, any
 * node can take the sandbox over.
 */
export interface SandboxBinding {
  readonly node: string;
  readonly tenant?: string;
  /** `running` or `paused`, as last known. */
  readonly state?: string;
  /** The exported pause snapshot's id in the shared store. */
  readonly export?: string;
  /** The `memory.baseId` of that snapshot (nodes holding it resume cheaper). */
  readonly base?: string;
  /** The node compat key of that snapshot. */
  readonly compat?: string;
  readonly templateId?: string;
  readonly updatedAt?: string;
}

/** A template every node of the cluster should hold, exported to the shared store. */
export interface SharedTemplate {
  readonly templateId: string;
  readonly aliases: readonly string[];
  /** Its snapshot's id, the same on every node. */
  readonly snapshotId: string;
  /** The node that exported it, and its compat key. */
  readonly node: string;
  readonly compat: string;
  readonly buildKey: string;
  readonly exportedAt: string;
}

/**
 * A node as `GET /nodes` shows it, on a node (itself) and through the
 * gateway (every node): E2B's names where they exist (`nodeID`, `status`,
 * `sandboxCount`, `sandboxStartingCount`), aenv's capacity, usage and
 * caches beside them.
 */
export interface NodeView {
  readonly nodeID: string;
  readonly id: string;
  readonly url: string;
  /** `ready`, `draining`, or (through the gateway) `lost`. */
  readonly status: string;
  readonly version: string;
  readonly driver: string;
  readonly mode: string;
  readonly sandboxCount: number;
  readonly sandboxPausedCount: number;
  readonly sandboxStartingCount: number;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly capacity: NodeCapacity;
  readonly usage: NodeUsage;
  readonly templates: readonly string[];
  readonly startedAt: string;
  readonly heartbeatAt: string;
}

/** The `GET /nodes` view of a report. */
export function toNodeView(r: NodeReport, status: string, starting = 0): NodeView {
  return {
    nodeID: r.id,
    id: r.id,
    url: r.url,
    status,
    version: r.version,
    driver: r.driver,
    mode: r.mode,
    sandboxCount: r.usage.running,
    sandboxPausedCount: r.usage.paused,
    sandboxStartingCount: starting,
    cpuCount: r.capacity.vcpus,
    memoryMB: r.capacity.memoryMiB,
    capacity: r.capacity,
    usage: r.usage,
    templates: r.templates.map((t) => t.id),
    startedAt: r.startedAt,
    heartbeatAt: r.reportedAt,
  };
}
