/**
 * Requests for one existing sandbox (`/sandboxes/{id}/...`,
 * `/v2/sandboxes/{id}/...`): sent to its node, moving it first when it is
 * paused on a lost node (or, to resume, on a draining or full one). The
 * gateway keeps the cluster state in step with what the node answered:
 *
 * - kill: the binding goes (also when the node no longer knew it);
 * - resume/connect answered `SBX_CAPACITY` (node full): the sandbox moves
 *   and the call is repeated on its new node;
 * - fork: the children are bound to the source's node (where they run),
 *   unless `spread` asked for them elsewhere (`fork-handler.ts`);
 * - snapshot: the user snapshot is bound to the node that holds it.
 *
 * The sandbox must belong to the caller's tenant (another tenant's answers
 * 404 `SBX_NOT_FOUND`, like a missing one). A fork first reserves its
 * children against the tenant's quotas, with the source's shape.
 *
 * @module
 */
import { LOG_FIELDS } from '@aenv/shared';
import type { ClusterNode } from '../state/cluster-node.js';
import type { Gateway, RequestContext } from './gateway-context.js';
import { forkSpread, isSpreadFork } from './fork-handler.js';
import { parseJson, parseJsonObject, readBody } from './http-io.js';
import type { NodeAnswer } from './node-client.js';
import type { Reservation } from '../tenants/tenant-quota.js';
import { relayAnswer, withDomain } from './relay.js';
import {
  homeFor,
  KILLED_NODE,
  locate,
  movable,
  moveSandbox,
  type SandboxHome,
} from './sandbox-home.js';

/** Operations that start a paused sandbox. */
const RESUMING = /^\/(resume|connect)$/;

/** Handles a request for sandbox `ctx.params.id` (`ctx.params.rest`: the path after the id). */
export async function sandboxRequest(g: Gateway, ctx: RequestContext): Promise<void> {
  const id = ctx.params.id ?? '';
  const rest = ctx.params.rest ?? '';
  const method = ctx.req.method ?? 'GET';
  const home = await locate(g, id, ctx.tenant);
  if (method === 'DELETE' && rest === '') return kill(g, ctx, home);
  const { body, fork } = await readRequest(ctx, method, rest);
  if (fork !== undefined && isSpreadFork(fork)) return forkSpread(g, ctx, home, fork);
  const resuming = method === 'POST' && RESUMING.test(rest);
  const reservation = fork === undefined ? undefined : await reserveFork(g, ctx, home, fork);
  const answer = await sendAndRecord(g, ctx, home, { resuming, body }).finally(() =>
    reservation?.release(),
  );
  const json = resuming && answer.status < 300 ? parseJson(answer.body) : undefined;
  relayAnswer(ctx.res, answer, json === undefined ? undefined : withDomain(json, g.domain));
}

/** The request's body, and its fork body when it is a fork. */
async function readRequest(
  ctx: RequestContext,
  method: string,
  rest: string,
): Promise<{ body: Buffer | undefined; fork: Record<string, unknown> | undefined }> {
  const body = method === 'GET' ? undefined : await readBody(ctx.req);
  const isFork = method === 'POST' && rest === '/fork';
  return { body, fork: isFork ? parseJsonObject(body ?? Buffer.alloc(0)) : undefined };
}

async function sendAndRecord(
  g: Gateway,
  ctx: RequestContext,
  home: SandboxHome,
  o: { resuming: boolean; body: Buffer | undefined },
): Promise<NodeAnswer> {
  const { node, answer } = await send(g, ctx, home, o);
  await record(g, ctx, { home, node, answer });
  return answer;
}

/** The shape a sandbox's binding records (0 when it records none). */
export function shapeOf(home: SandboxHome): { vcpus: number; memoryMB: number } {
  const b = home.binding as { vcpus?: string; memoryMB?: string };
  return { vcpus: Number(b.vcpus) || 0, memoryMB: Number(b.memoryMB) || 0 };
}

async function reserveFork(
  g: Gateway,
  ctx: RequestContext,
  home: SandboxHome,
  fork: Readonly<Record<string, unknown>>,
): Promise<Reservation> {
  const count = typeof fork.count === 'number' && fork.count > 0 ? Math.ceil(fork.count) : 1;
  const shape = shapeOf(home);
  return g.quota.reserve(ctx.tenant, {
    count,
    vcpus: shape.vcpus * count,
    memoryMB: shape.memoryMB * count,
  });
}

/**
 * Sends the request to the sandbox's node; a resume a full node refuses
 * moves the sandbox and is sent again.
 */
async function send(
  g: Gateway,
  ctx: RequestContext,
  home: SandboxHome,
  o: { resuming: boolean; body: Buffer | undefined },
): Promise<{ node: ClusterNode; answer: NodeAnswer }> {
  const call = {
    method: ctx.req.method ?? 'GET',
    path: pathOf(ctx),
    headers: ctx.req.headers,
    body: o.body,
  };
  const node = await homeFor(g, home, o.resuming);
  const answer = await g.nodes.call(node.report.url, call);
  if (!o.resuming || !isCapacity(answer.status, answer.body) || !movable(home.binding)) {
    return { node, answer };
  }
  const moved = await moveSandbox(g, { ...home, node }, [node.id]);
  return { node: moved, answer: await g.nodes.call(moved.report.url, call) };
}

async function kill(g: Gateway, ctx: RequestContext, home: SandboxHome): Promise<void> {
  const node = home.node;
  if (node === undefined || node.status === 'lost') {
    if (!movable(home.binding)) await homeFor(g, home, false); // throws CLUSTER_NODE_LOST
    // Its node is gone: a tombstone tells it to drop its copy should it come back.
    await g.state.tombstone(home.id, KILLED_NODE, home.binding);
    ctx.res.writeHead(204).end();
    return;
  }
  const answer = await g.nodes.call(node.report.url, {
    method: 'DELETE',
    path: pathOf(ctx),
    headers: ctx.req.headers,
  });
  if (answer.status < 300 || answer.status === 404) await g.state.unbind(home.id, home.binding);
  relayAnswer(ctx.res, answer);
}

/** What a node answered for a sandbox. */
interface Outcome {
  readonly home: SandboxHome;
  readonly node: ClusterNode;
  readonly answer: NodeAnswer;
}

/** Bookkeeping after a node answered. */
async function record(g: Gateway, ctx: RequestContext, o: Outcome): Promise<void> {
  if (o.answer.status >= 300) return;
  const rest = ctx.params.rest ?? '';
  if (rest === '/fork') await bindChildren(g, ctx, o);
  else if (rest === '/snapshots') {
    const snap = (parseJson(o.answer.body) as { snapshotID?: unknown } | undefined)?.snapshotID;
    if (typeof snap === 'string') await g.state.bindSnapshot(snap, o.node.id);
  } else if (RESUMING.test(rest)) {
    await g.state.updateBinding(o.home.id, { state: 'running' });
  }
  g.logger.debug('sandbox request forwarded', {
    [LOG_FIELDS.sandboxId]: o.home.id,
    [LOG_FIELDS.nodeId]: o.node.id,
  });
}

/** Binds the children of a fork to the source's node. */
async function bindChildren(g: Gateway, ctx: RequestContext, o: Outcome): Promise<void> {
  const children = parseJson(o.answer.body);
  if (!Array.isArray(children)) return;
  const shape = shapeOf(o.home);
  for (const c of children as { sandbox?: { sandboxID?: unknown } }[]) {
    const child = c.sandbox?.sandboxID;
    if (typeof child === 'string') {
      await g.state.bind(child, {
        node: o.node.id,
        tenant: ctx.tenant,
        state: 'running',
        ...shape,
      });
    }
  }
  g.metrics.placed(o.node.id, children.length);
}

function isCapacity(status: number, body: Buffer): boolean {
  if (status !== 429) return false;
  return (parseJson(body) as { error_code?: unknown } | undefined)?.error_code === 'SBX_CAPACITY';
}

function pathOf(ctx: RequestContext): string {
  return `${ctx.url.pathname}${ctx.url.search}`;
}
