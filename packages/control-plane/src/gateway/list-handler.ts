/**
 * Lists through the gateway: every live node is asked (all pages), the
 * answers are merged, the tenant's sandboxes kept, and the result paged
 * again with the node API's own `limit`/`nextToken` (base64url of the last
 * id) and `x-next-token`. A node that fails to answer is left out and
 * named in `x-aenv-partial` rather than failing the whole list.
 *
 * - `GET /sandboxes` (1.x SDKs): running sandboxes, `metadata` filter;
 * - `GET /v2/sandboxes`: `state`, `metadata`, `template`, `startedAfter`,
 *   `order`, `limit`, `nextToken`;
 * - `GET /snapshots`: `sandboxID`, `name`, `limit`, `nextToken`;
 * - `GET /templates`: the union over nodes (a template listed once).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { ClusterNode } from '../state/cluster-node.js';
import type { Gateway, RequestContext } from './gateway-context.js';
import { parseJson, sendJson } from './http-io.js';
import { DEFAULT_TENANT } from './tenant-keys.js';

/** Most pages read from one node for one list. */
const MAX_PAGES = 1000;

/** The nodes that answer lists (alive ones). */
export function liveNodes(nodes: readonly ClusterNode[]): ClusterNode[] {
  return nodes.filter((n) => n.status !== 'lost');
}

/** Every item of a paged list on one node. */
async function allPages(
  g: Gateway,
  node: ClusterNode,
  path: string,
  query: URLSearchParams,
): Promise<unknown[]> {
  const items: unknown[] = [];
  const q = new URLSearchParams(query);
  q.delete('nextToken');
  q.set('limit', '100');
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await g.nodes.call(node.report.url, {
      method: 'GET',
      path: `${path}?${q.toString()}`,
    });
    const body = parseJson(answer.body);
    if (answer.status !== 200 || !Array.isArray(body)) {
      throw new AenvError(
        'CLUSTER_NODE_UNREACHABLE',
        `node ${node.id} answered ${answer.status} to ${path}`,
      );
    }
    items.push(...(body as unknown[]));
    const next = answer.headers['x-next-token'];
    if (typeof next !== 'string' || next === '') break;
    q.set('nextToken', next);
  }
  return items;
}

/** Asks every live node; returns the merged items and the nodes that failed. */
async function gather(
  g: Gateway,
  path: string,
  query: URLSearchParams,
  paged: boolean,
): Promise<{ items: unknown[]; failed: string[] }> {
  const nodes = liveNodes(await g.state.nodes());
  const failed: string[] = [];
  const parts = await Promise.all(
    nodes.map(async (n) => {
      try {
        if (paged) return await allPages(g, n, path, query);
        const answer = await g.nodes.call(n.report.url, {
          method: 'GET',
          path: `${path}?${query.toString()}`,
        });
        const body = parseJson(answer.body);
        if (answer.status !== 200 || !Array.isArray(body))
          throw new Error(`answered ${answer.status}`);
        return body as unknown[];
      } catch {
        failed.push(n.id);
        return [];
      }
    }),
  );
  return { items: parts.flat(), failed };
}

function partialHeader(failed: string[]): Record<string, string> {
  return failed.length === 0 ? {} : { 'x-aenv-partial': failed.sort().join(',') };
}

/** Pages `items` (sorted) by `limit` and the `nextToken` of the last id. */
function page(
  items: readonly { id: string; item: unknown }[],
  query: URLSearchParams,
): { body: unknown[]; headers: Record<string, string> } {
  const limitText = query.get('limit');
  const limit = limitText === null || limitText === '' ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new AenvError(
      'API_BODY_INVALID',
      "query parameter 'limit': expected an integer from 1 to 100",
      {
        fields: { field: 'limit' },
      },
    );
  }
  const token = query.get('nextToken');
  let start = 0;
  if (token !== null && token !== '') {
    const after = Buffer.from(token, 'base64url').toString('utf8');
    start = items.findIndex((i) => i.id === after) + 1;
    if (start === 0) {
      throw new AenvError('API_BODY_INVALID', "query parameter 'nextToken' is not valid", {
        fields: { field: 'nextToken' },
      });
    }
  }
  const slice = items.slice(start, start + limit);
  const last = slice.at(-1);
  const more = start + limit < items.length && last !== undefined;
  return {
    body: slice.map((i) => i.item),
    headers: more ? { 'x-next-token': Buffer.from(last.id).toString('base64url') } : {},
  };
}

/** Keeps the sandboxes of the request's tenant. */
async function ofTenant(
  g: Gateway,
  tenant: string,
  items: readonly { id: string; item: unknown }[],
) {
  const bindings = await g.state.bindings(items.map((i) => i.id));
  return items.filter((i) => (bindings.get(i.id)?.tenant ?? DEFAULT_TENANT) === tenant);
}

interface Listed {
  readonly sandboxID: string;
  readonly startedAt?: string;
}

/** `GET /sandboxes` and `GET /v2/sandboxes`. */
export async function listSandboxes(
  g: Gateway,
  ctx: RequestContext,
  version: 'v1' | 'v2',
): Promise<void> {
  const q = new URLSearchParams(ctx.url.searchParams);
  const order = q.get('order') ?? 'asc';
  const path = version === 'v1' ? '/sandboxes' : '/v2/sandboxes';
  const { items, failed } = await gather(g, path, q, version === 'v2');
  const keyed = (items as Listed[])
    .map((i) => ({ id: i.sandboxID, at: Date.parse(i.startedAt ?? '') || 0, item: i }))
    .sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
  if (order === 'desc') keyed.reverse();
  const mine = await ofTenant(g, ctx.tenant, keyed);
  if (version === 'v1')
    return sendJson(
      ctx.res,
      200,
      mine.map((i) => i.item),
      partialHeader(failed),
    );
  const { body, headers } = page(mine, q);
  sendJson(ctx.res, 200, body, { ...headers, ...partialHeader(failed) });
}

/** `GET /snapshots`. */
export async function listSnapshots(g: Gateway, ctx: RequestContext): Promise<void> {
  const q = new URLSearchParams(ctx.url.searchParams);
  const { items, failed } = await gather(g, '/snapshots', q, true);
  const seen = new Set<string>();
  const keyed = (items as { snapshotID: string; createdAt?: string }[])
    .filter((s) => !seen.has(s.snapshotID) && seen.add(s.snapshotID))
    .map((s) => ({ id: s.snapshotID, at: Date.parse(s.createdAt ?? '') || 0, item: s }))
    .sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
  const { body, headers } = page(keyed, q);
  sendJson(ctx.res, 200, body, { ...headers, ...partialHeader(failed) });
}

/** `GET /templates`: each template once. */
export async function listTemplates(g: Gateway, ctx: RequestContext): Promise<void> {
  const q = new URLSearchParams(ctx.url.searchParams);
  const { items, failed } = await gather(g, ctx.url.pathname, q, false);
  const seen = new Set<string>();
  const unique = (items as { templateID: string }[]).filter(
    (t) => !seen.has(t.templateID) && seen.add(t.templateID),
  );
  sendJson(ctx.res, 200, unique, partialHeader(failed));
}
