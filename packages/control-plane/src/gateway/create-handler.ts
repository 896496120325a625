/**
 * Creates through the gateway (`POST /sandboxes`, `POST /v2/sandboxes`):
 * the scheduler places the sandbox (the template's shape, preferring nodes
 * that hold its template, optionally a `driver`), the node creates it, and
 * the gateway binds it to that node and its tenant. A node that turns out
 * full, shutting down or unreachable is passed over (twice at most).
 *
 * A create from a user snapshot goes to the node holding the snapshot. A
 * batch (`count`) is planned across nodes and sent as one batch per node;
 * the answer lists every sandbox, in node order. An `Idempotency-Key`
 * pins the create to the node that first saw the key, whose own cache then
 * answers the retry.
 *
 * Before placing, the create reserves its sandboxes, vCPUs and memory and a
 * create token against the tenant's quotas (`tenants/tenant-quota.ts`; 429
 * `TENANT_QUOTA_EXCEEDED` with `Retry-After`); the reservation is given
 * back once the sandboxes are bound (they then count by their bindings,
 * which record their shape) or the create failed. A retry pinned by its
 * `Idempotency-Key` is answered by the node's cache and reserves nothing.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { AenvError, LOG_FIELDS, toHttpError } from '@aenv/shared';
import type { PlacementRequest } from '../scheduler/placement.js';
import type { ClusterNode } from '../state/cluster-node.js';
import type { Gateway, RequestContext } from './gateway-context.js';
import { parseJson, parseJsonObject, readBody, sendJson } from './http-io.js';
import type { NodeAnswer } from './node-client.js';
import { relayAnswer, withDomain } from './relay.js';

/** Errors of a node after which another node is tried. */
const RETRY_CODES = new Set(['SBX_CAPACITY', 'NODE_SHUTTING_DOWN', 'CLUSTER_NODE_UNREACHABLE']);
const DEFAULT_SHAPE = { vcpus: 2, memoryMiB: 512 };

/** What a new sandbox's binding records besides its node and tenant. */
interface BindInfo {
  readonly templateId: string | undefined;
  readonly vcpus: number;
  readonly memoryMB: number;
}

/** The create handler. */
export async function createSandbox(g: Gateway, ctx: RequestContext): Promise<void> {
  const raw = await readBody(ctx.req);
  const body = parseJsonObject(raw);
  const nodes = await g.state.nodes();
  const req = await placementOf(g, body, nodes);
  const count = body.count === undefined ? 1 : batchCount(body.count);
  const info: BindInfo = {
    templateId: typeof body.templateID === 'string' ? body.templateID : undefined,
    vcpus: req.vcpus,
    memoryMB: req.memoryMiB,
  };
  const pinned = body.count === undefined ? await idempotentNode(g, ctx, nodes) : undefined;
  if (pinned !== undefined) {
    const answer = await g.nodes.call(pinned.report.url, callOf(ctx, raw));
    return answer.status < 300
      ? created(g, ctx, pinned, answer, info)
      : relayAnswer(ctx.res, answer);
  }
  const reservation = await g.quota.reserve(ctx.tenant, {
    count,
    vcpus: req.vcpus * count,
    memoryMB: req.memoryMiB * count,
  });
  try {
    if (body.count !== undefined) return await createBatch(g, ctx, { body, count, info }, req);
    const last = await createPlaced(g, ctx, { raw, info }, req);
    if (last === undefined) return;
    if (last instanceof Error) throw last;
    relayAnswer(ctx.res, last);
  } finally {
    await reservation.release();
  }
}

/**
 * Places and creates, passing over nodes that turn out full, stopping or
 * unreachable; returns the last failure, or undefined once answered.
 */
async function createPlaced(
  g: Gateway,
  ctx: RequestContext,
  c: { readonly raw: Buffer; readonly info: BindInfo },
  req: PlacementRequest,
): Promise<NodeAnswer | Error | undefined> {
  const { raw, info } = c;
  const tried: string[] = [];
  let last: NodeAnswer | Error = new Error('no node was tried');
  for (let attempt = 0; attempt < 3; attempt++) {
    const exclude = [...(req.exclude ?? []), ...tried];
    const placement = await g.scheduler.place({ ...req, exclude });
    const node = placement.node;
    await pinIdempotency(g, ctx, node.id);
    last = await tryCall(g.nodes.call(node.report.url, callOf(ctx, raw)));
    if (!(last instanceof Error) && last.status < 300) {
      await created(g, ctx, node, last, info);
      return undefined;
    }
    await placement.release();
    const code = last instanceof Error ? toHttpError(last).body.error_code : codeOf(last);
    if (code === undefined || !RETRY_CODES.has(code)) return last;
    if (last instanceof Error) g.metrics.nodeUnreachable();
    g.logger.info('create passed over a node', { [LOG_FIELDS.nodeId]: node.id, code });
    tried.push(node.id);
  }
  return last;
}

function callOf(ctx: RequestContext, body: Buffer) {
  return { method: 'POST', path: ctx.url.pathname, headers: ctx.req.headers, body };
}

async function tryCall(p: Promise<NodeAnswer>): Promise<NodeAnswer | Error> {
  try {
    return await p;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

async function created(
  g: Gateway,
  ctx: RequestContext,
  node: ClusterNode,
  answer: NodeAnswer,
  info: BindInfo,
): Promise<void> {
  const json = parseJson(answer.body) as { sandboxID?: unknown } | undefined;
  if (typeof json?.sandboxID === 'string') {
    await g.state.bind(json.sandboxID, {
      node: node.id,
      tenant: ctx.tenant,
      state: 'running',
      ...info,
    });
  }
  g.metrics.placed(node.id);
  relayAnswer(ctx.res, answer, json === undefined ? undefined : withDomain(json, g.domain));
}

/**
 * A batch's `count`.
 * @throws {AenvError} `API_BODY_INVALID`.
 */
function batchCount(count: unknown): number {
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 100) {
    throw new AenvError('API_BODY_INVALID', "field 'count': expected an integer from 1 to 100", {
      fields: { field: 'count' },
    });
  }
  return count;
}

async function createBatch(
  g: Gateway,
  ctx: RequestContext,
  b: { readonly body: Record<string, unknown>; readonly count: number; readonly info: BindInfo },
  req: PlacementRequest,
): Promise<void> {
  const { body, count, info } = b;
  const { shares, placements } = await g.scheduler.placeBatch(req, count);
  const perNode = await Promise.all(
    shares.map(async (s) => {
      const answer = await tryCall(
        g.nodes.json(s.node.report.url, 'POST', ctx.url.pathname, { ...body, count: s.count }),
      );
      if (answer instanceof Error || answer.status >= 300) {
        const error = answer instanceof Error ? toHttpError(answer).body : parseJson(answer.body);
        return Array.from({ length: s.count }, () => ({ error }));
      }
      const entries =
        (parseJson(answer.body) as { sandbox?: { sandboxID?: unknown } }[] | undefined) ?? [];
      for (const e of entries) {
        const id = e.sandbox?.sandboxID;
        if (typeof id === 'string') {
          await g.state.bind(id, {
            node: s.node.id,
            tenant: ctx.tenant,
            state: 'running',
            ...info,
          });
        }
      }
      g.metrics.placed(s.node.id, entries.length);
      return entries;
    }),
  );
  await Promise.all(placements.map((p) => p.release()));
  const results: unknown[] = perNode.flat();
  const noRoom = toHttpError(
    new AenvError('CLUSTER_NO_CAPACITY', 'no node had room for this sandbox'),
  ).body;
  while (results.length < count) results.push({ error: noRoom });
  sendJson(ctx.res, 201, withDomain(results, g.domain));
}

/** What the create asks the scheduler for. */
async function placementOf(
  g: Gateway,
  body: Readonly<Record<string, unknown>>,
  nodes: readonly ClusterNode[],
): Promise<PlacementRequest> {
  const templateId = typeof body.templateID === 'string' ? body.templateID : undefined;
  const driver = typeof body.driver === 'string' ? body.driver : undefined;
  const snapshotNode =
    templateId === undefined ? undefined : await g.state.snapshotNode(templateId);
  if (snapshotNode !== undefined) {
    return {
      ...DEFAULT_SHAPE,
      driver,
      exclude: nodes.filter((n) => n.id !== snapshotNode).map((n) => n.id),
    };
  }
  const holders = nodes.flatMap((n) =>
    n.report.templates.filter((t) => t.id === templateId || t.aliases.includes(templateId ?? '')),
  );
  const shape = holders[0];
  return {
    vcpus: shape?.vcpus ?? DEFAULT_SHAPE.vcpus,
    memoryMiB: shape?.memoryMiB ?? DEFAULT_SHAPE.memoryMiB,
    templateId,
    requireTemplate: holders.length > 0,
    driver,
  };
}

function idempotencyKey(ctx: RequestContext): string | undefined {
  const key = ctx.req.headers['idempotency-key'];
  if (typeof key !== 'string' || key === '') return undefined;
  const digest = createHash('sha256')
    .update(`${ctx.tenant}\n${ctx.url.pathname}\n${key}`)
    .digest('hex');
  return `idem:${digest.slice(0, 40)}`;
}

async function idempotentNode(
  g: Gateway,
  ctx: RequestContext,
  nodes: readonly ClusterNode[],
): Promise<ClusterNode | undefined> {
  const key = idempotencyKey(ctx);
  if (key === undefined) return undefined;
  const node = await g.state.redis.get(g.state.keys.lock(key));
  return nodes.find((n) => n.id === node && n.status !== 'lost');
}

async function pinIdempotency(g: Gateway, ctx: RequestContext, node: string): Promise<void> {
  const key = idempotencyKey(ctx);
  if (key !== undefined) await g.state.redis.set(g.state.keys.lock(key), node, 'EX', 86_400, 'NX');
}

function codeOf(answer: NodeAnswer): string | undefined {
  const code = (parseJson(answer.body) as { error_code?: unknown } | undefined)?.error_code;
  return typeof code === 'string' ? code : undefined;
}
