/**
 * Where a sandbox lives, and moving a paused one. A sandbox's node comes
 * from its binding in Redis (written at create, kept current by its node);
 * a sandbox made directly on a node is found in the nodes' reports and
 * bound then.
 *
 * A paused sandbox whose node is lost (or draining, or full, for a resume)
 * moves when its pause was exported: the scheduler picks a node of the
 * same compat key (preferring one that holds its memory base), that node
 * adopts the sandbox from the shared store, the binding moves, and the old
 * node, if it still answers, drops its copy. A lock in Redis makes
 * concurrent gateways move it once.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError, LOG_FIELDS, isErrorCode, type SandboxBinding } from '@aenv/shared';
import { errorFields } from '../log.js';
import type { ClusterNode } from '../state/cluster-node.js';
import type { Gateway } from './gateway-context.js';
import { DEFAULT_TENANT } from './tenant-keys.js';

/** Binding value of a sandbox killed while its node was lost (its node drops it on return). */
export const KILLED_NODE = '-';

/** A located sandbox. */
export interface SandboxHome {
  readonly id: string;
  readonly binding: SandboxBinding;
  /** Its node, if that node ever registered. */
  readonly node: ClusterNode | undefined;
}

/** `SBX_NOT_FOUND`. */
export function sandboxNotFound(id: string): AenvError {
  return new AenvError('SBX_NOT_FOUND', `sandbox ${id} not found`, { fields: { sandboxId: id } });
}

/**
 * Finds a sandbox's node; `tenant` (when given) must own it.
 * @throws {AenvError} `SBX_NOT_FOUND`, `CLUSTER_STATE_UNAVAILABLE`.
 */
export async function locate(g: Gateway, id: string, tenant?: string): Promise<SandboxHome> {
  let binding = await g.state.binding(id);
  const nodes = await g.state.nodes();
  if (binding === undefined) {
    const holder = nodes.find((n) => n.alive && n.report.sandboxes.some((s) => s.id === id));
    if (holder === undefined) throw sandboxNotFound(id);
    const state =
      holder.report.sandboxes.find((s) => s.id === id)?.state === 'paused' ? 'paused' : 'running';
    await g.state.bind(id, { node: holder.id, tenant: DEFAULT_TENANT, state });
    binding = { node: holder.id, tenant: DEFAULT_TENANT, state };
  }
  if (binding.node === KILLED_NODE) throw sandboxNotFound(id);
  if (tenant !== undefined && (binding.tenant ?? DEFAULT_TENANT) !== tenant)
    throw sandboxNotFound(id);
  return { id, binding, node: nodes.find((n) => n.id === binding.node) };
}

/** Whether a sandbox can move: paused, with its pause exported. */
export function movable(b: SandboxBinding): boolean {
  return b.state === 'paused' && b.export !== undefined && b.export !== '';
}

/**
 * The node to send a request for the sandbox to, moving it first when its
 * node is lost (any request) or draining (`resuming` requests).
 * @throws {AenvError} `CLUSTER_NODE_LOST`, move errors.
 */
export async function homeFor(
  g: Gateway,
  home: SandboxHome,
  resuming: boolean,
): Promise<ClusterNode> {
  const n = home.node;
  const lost = n === undefined || n.status === 'lost';
  if (!lost && !(resuming && n.status === 'draining' && home.binding.state === 'paused')) return n;
  if (!movable(home.binding)) {
    if (!lost) return n;
    throw new AenvError(
      'CLUSTER_NODE_LOST',
      `sandbox ${home.id} was ${home.binding.state ?? 'running'} on node ${home.binding.node}, which is lost`,
      { fields: { sandboxId: home.id, nodeId: home.binding.node } },
    );
  }
  return moveSandbox(g, home, [home.binding.node]);
}

/**
 * Moves a paused, exported sandbox to another node.
 * @throws {AenvError} `CLUSTER_NO_CAPACITY`, `CLUSTER_MOVE_IN_PROGRESS`, the adopting node's error.
 */
export async function moveSandbox(
  g: Gateway,
  home: SandboxHome,
  exclude: string[],
): Promise<ClusterNode> {
  const { id } = home;
  const token = await g.state.lockMove(id, 180_000);
  if (token === undefined) return waitForMove(g, home);
  const t0 = performance.now();
  try {
    const b = (await g.state.binding(id)) ?? home.binding;
    if (b.node !== home.binding.node) return await nodeOf(g, b.node);
    const placement = await g.scheduler.place({
      vcpus: 0,
      memoryMiB: 0,
      memoryBase: b.base === '' ? undefined : b.base,
      compat: b.compat,
      exclude,
    });
    const target = placement.node;
    const answer = await g.nodes.json(
      target.report.url,
      'POST',
      `/cluster/sandboxes/${encodeURIComponent(id)}/adopt`,
      {
        snapshotID: b.export,
      },
    );
    await placement.release();
    if (answer.status !== 200) throw nodeError(answer.status, answer.body);
    await g.state.rebind(id, b.node, target.id);
    g.metrics.moved();
    g.logger.info('paused sandbox moved', {
      [LOG_FIELDS.sandboxId]: id,
      from: b.node,
      [LOG_FIELDS.nodeId]: target.id,
      [LOG_FIELDS.durationMs]: Math.round(performance.now() - t0),
    });
    const old = home.node;
    if (old !== undefined && old.status !== 'lost') void releaseOld(g, old, id);
    return target;
  } finally {
    await g.state.unlockMove(id, token);
  }
}

async function releaseOld(g: Gateway, old: ClusterNode, id: string): Promise<void> {
  try {
    await g.nodes.json(
      old.report.url,
      'POST',
      `/cluster/sandboxes/${encodeURIComponent(id)}/release`,
    );
  } catch (err) {
    g.logger.warn('the old node did not drop a moved sandbox (the scheduler will)', {
      [LOG_FIELDS.sandboxId]: id,
      [LOG_FIELDS.nodeId]: old.id,
      ...errorFields(err),
    });
  }
}

async function waitForMove(g: Gateway, home: SandboxHome): Promise<ClusterNode> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    await sleep(250);
    const b = await g.state.binding(home.id);
    if (b === undefined) throw sandboxNotFound(home.id);
    if (b.node !== home.binding.node) return nodeOf(g, b.node);
  }
  throw new AenvError('CLUSTER_MOVE_IN_PROGRESS', `sandbox ${home.id} is being moved; retry`, {
    fields: { sandboxId: home.id },
  });
}

async function nodeOf(g: Gateway, id: string): Promise<ClusterNode> {
  const n = await g.state.node(id);
  if (n === undefined) throw new AenvError('CLUSTER_NODE_NOT_FOUND', `node ${id} not found`);
  return n;
}

/** An error a node answered, as an AenvError with its code when it has one. */
export function nodeError(status: number, body: Buffer): AenvError {
  let parsed: { message?: unknown; error_code?: unknown } = {};
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    // not JSON: the status says enough
  }
  const code = typeof parsed.error_code === 'string' ? parsed.error_code : 'INTERNAL';
  const message = typeof parsed.message === 'string' ? parsed.message : `node answered ${status}`;
  return new AenvError(isErrorCode(code) ? code : 'INTERNAL', message, { fields: { status } });
}
