/**
 * Forks spread across nodes (`POST /sandboxes/{id}/fork` with aenv's
 * `spread: true`). A plain fork runs its children on the source's node
 * (one checkpoint, copy-on-write restores: the cheapest). A spread fork
 * takes a user snapshot of the source, exports it to the shared store,
 * plans the children over the nodes like a batch create, has each other
 * node import the snapshot, and creates the children there from it. The
 * temporary snapshot is then deleted (each node removes it once its last
 * child is gone).
 *
 * Differences from a plain fork: the children are creates from a snapshot
 * (their `templateID` is the snapshot's id; no `parentSandboxID`), and they
 * inherit the source's metadata, TTL, `secure`, auto-pause and network
 * settings but not its create-time `envVars` (the node does not show them).
 * The children are reserved against the tenant's quotas (with the source's
 * shape) before anything is snapshotted.
 *
 * @module
 */
import { AenvError, toHttpError } from '@aenv/shared';
import type { NodeShare } from '../scheduler/scheduler.js';
import type { ClusterNode } from '../state/cluster-node.js';
import type { Gateway, RequestContext } from './gateway-context.js';
import { parseJson, sendJson } from './http-io.js';
import { withDomain } from './relay.js';
import { homeFor, nodeError, type SandboxHome } from './sandbox-home.js';

/** Whether a fork body asks for spreading. */
export function isSpreadFork(body: Readonly<Record<string, unknown>>): boolean {
  return body.spread === true;
}

interface ForkBody {
  readonly count: number;
  readonly timeout: number | undefined;
  readonly metadata: Record<string, string>;
}

function parseFork(body: Readonly<Record<string, unknown>>): ForkBody {
  const count = body.count ?? 1;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 100) {
    throw new AenvError('API_BODY_INVALID', "field 'count': expected an integer from 1 to 100", {
      fields: { field: 'count' },
    });
  }
  const timeout = typeof body.timeout === 'number' ? body.timeout : undefined;
  const metadata = (
    typeof body.metadata === 'object' && body.metadata !== null ? body.metadata : {}
  ) as Record<string, string>;
  return { count, timeout, metadata };
}

/** Runs a spread fork and answers E2B's fork shape: one `{sandbox}` or `{error}` per child. */
export async function forkSpread(
  g: Gateway,
  ctx: RequestContext,
  home: SandboxHome,
  raw: Readonly<Record<string, unknown>>,
): Promise<void> {
  const body = parseFork(raw);
  const source = await homeFor(g, home, false);
  const id = encodeURIComponent(home.id);
  const detail = await callOk(g, source, 'GET', `/sandboxes/${id}`);
  const shape = { vcpus: num(detail, 'cpuCount'), memoryMB: num(detail, 'memoryMB') };
  const reservation = await g.quota.reserve(ctx.tenant, {
    count: body.count,
    vcpus: shape.vcpus * body.count,
    memoryMB: shape.memoryMB * body.count,
  });
  try {
    await spread(g, ctx, { source, home, body, detail, shape });
  } finally {
    await reservation.release();
  }
}

/** A spread fork under way. */
interface SpreadFork {
  readonly source: ClusterNode;
  readonly home: SandboxHome;
  readonly body: ForkBody;
  readonly detail: unknown;
  readonly shape: { readonly vcpus: number; readonly memoryMB: number };
}

async function spread(g: Gateway, ctx: RequestContext, f: SpreadFork): Promise<void> {
  const { source, body, detail } = f;
  const id = encodeURIComponent(f.home.id);
  const snap = await callOk(g, source, 'POST', `/sandboxes/${id}/snapshots`, {});
  const snapshotId = String((snap as { snapshotID?: unknown }).snapshotID);
  await callOk(g, source, 'POST', `/cluster/snapshots/${snapshotId}/export`);
  const { shares, placements } = await g.scheduler.placeBatch(
    { vcpus: f.shape.vcpus, memoryMiB: f.shape.memoryMB, compat: source.report.compat },
    body.count,
  );
  const createBody = childBody(detail, body, snapshotId);
  const job = { source, snapshotId, body: createBody, tenant: ctx.tenant, shape: f.shape };
  const results = (await Promise.all(shares.map((s) => createOn(g, s, job)))).flat();
  await Promise.all(placements.map((p) => p.release()));
  for (let i = results.length; i < body.count; i++) {
    results.push({
      error: toHttpError(new AenvError('CLUSTER_NO_CAPACITY', 'no node had room for this child'))
        .body,
    });
  }
  await Promise.all(
    shares.map((s) =>
      g.nodes.json(s.node.report.url, 'DELETE', `/snapshots/${snapshotId}`).catch(() => undefined),
    ),
  );
  if (!shares.some((s) => s.node.id === source.id)) {
    await g.nodes
      .json(source.report.url, 'DELETE', `/snapshots/${snapshotId}`)
      .catch(() => undefined);
  }
  sendJson(ctx.res, 201, withDomain(results, g.domain));
}

/** What every node's share of a spread fork is made from. */
interface SpreadJob {
  readonly source: ClusterNode;
  readonly snapshotId: string;
  readonly body: Record<string, unknown>;
  readonly tenant: string;
  readonly shape: { readonly vcpus: number; readonly memoryMB: number };
}

async function createOn(g: Gateway, share: NodeShare, job: SpreadJob): Promise<unknown[]> {
  try {
    if (share.node.id !== job.source.id) {
      await callOk(g, share.node, 'POST', `/cluster/snapshots/${job.snapshotId}/import`);
    }
    const made = await callOk(g, share.node, 'POST', '/v2/sandboxes', {
      ...job.body,
      count: share.count,
    });
    const entries = Array.isArray(made) ? (made as { sandbox?: { sandboxID?: unknown } }[]) : [];
    for (const e of entries) {
      const child = e.sandbox?.sandboxID;
      if (typeof child !== 'string') continue;
      await g.state.bind(child, {
        node: share.node.id,
        tenant: job.tenant,
        state: 'running',
        templateId: job.snapshotId,
        ...job.shape,
      });
    }
    g.metrics.placed(share.node.id, entries.length);
    return entries;
  } catch (err) {
    const error = toHttpError(err).body;
    return Array.from({ length: share.count }, () => ({ error }));
  }
}

function childBody(detail: unknown, body: ForkBody, snapshotId: string): Record<string, unknown> {
  const d = detail as {
    metadata?: Record<string, string>;
    envdAccessToken?: string;
    lifecycle?: { onTimeout?: string; autoResume?: boolean };
    network?: unknown;
    allowInternetAccess?: boolean;
  };
  return {
    templateID: snapshotId,
    metadata: { ...d.metadata, ...body.metadata },
    secure: d.envdAccessToken !== undefined,
    autoPause: d.lifecycle?.onTimeout === 'pause',
    ...(body.timeout === undefined ? {} : { timeout: body.timeout }),
    ...(d.network === undefined ? {} : { network: d.network }),
    ...(d.allowInternetAccess === undefined ? {} : { allowInternetAccess: d.allowInternetAccess }),
  };
}

function num(detail: unknown, key: string): number {
  const v = (detail as Record<string, unknown>)[key];
  return typeof v === 'number' ? v : 0;
}

async function callOk(
  g: Gateway,
  node: ClusterNode,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const answer = await g.nodes.json(node.report.url, method, path, body);
  if (answer.status >= 300) throw nodeError(answer.status, answer.body);
  return parseJson(answer.body) ?? {};
}
