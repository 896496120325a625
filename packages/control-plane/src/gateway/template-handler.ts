/**
 * Templates and user snapshots through the gateway.
 *
 * Template builds (every `/templates...`, `/v2/templates...`,
 * `/v3/templates...` request but the list and delete) run on one node:
 * a request naming a template goes to the node building it (recorded when
 * the build began) or one holding it; one naming none (a new template, a
 * pull) is placed by the scheduler, and the `templateID` its node answers
 * (JSON or a progress stream) binds the template's later build calls to
 * that node. Once built, the template reaches every node by the nodes' own
 * template sync.
 *
 * `DELETE /templates/{id}` removes the template from every node (or, for a
 * user snapshot's id, from its node) and, once a node agreed (nodes check
 * that the caller's tenant owns it), from the shared catalog.
 * User snapshots (`/snapshots/{id}`) go to the node holding them.
 *
 * Template changes (builds, deletes) by an `admin` key reach the nodes as
 * the operator (no `x-aenv-tenant`): a node takes the cluster key with a
 * tenant as that tenant's member, who may not change public templates; so
 * an admin's builds are public templates, as the base template is.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { ClusterNode } from '../state/cluster-node.js';
import type { Gateway, RequestContext } from './gateway-context.js';
import type { NodeClient } from './node-client.js';
import { readBody } from './http-io.js';
import { liveNodes } from './list-handler.js';
import { relayAnswer } from './relay.js';

/** The node client for a template change: the operator's for an admin. */
function changer(g: Gateway, ctx: RequestContext): NodeClient {
  const write = ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD';
  return write && ctx.caller.role === 'admin' ? g.nodes.operator() : g.nodes;
}

/** Path words after `templates/` that name an action, not a template. */
const ACTIONS = new Set(['pull', 'build']);
const TEMPLATE_PATH = /^\/(?:v\d+\/)?templates(?:\/([^/]+))?(\/.*)?$/;
const ID_IN_ANSWER = /"templateID"\s*:\s*"([^"]+)"/;

/** Any other template request: to the template's node, or a placed one. */
export async function templateRequest(g: Gateway, ctx: RequestContext): Promise<void> {
  const named = templateNamed(ctx.url.pathname);
  const nodes = await g.state.nodes();
  let node = named === undefined ? undefined : await templateNode(g, nodes, named);
  if (node === undefined) {
    const placement = await g.scheduler.place({ vcpus: 0, memoryMiB: 0 });
    await placement.release();
    node = placement.node;
  }
  const target = node;
  let bound = false;
  let seen = '';
  await changer(g, ctx).forward(target.report.url, ctx.req, ctx.res, {
    path: `${ctx.url.pathname}${ctx.url.search}`,
    onChunk: (chunk) => {
      if (bound) return;
      seen = (seen + chunk.toString('utf8')).slice(-4096);
      const id = ID_IN_ANSWER.exec(seen)?.[1];
      if (id !== undefined) {
        bound = true;
        void g.state.setTemplateBuilder(id, target.id).catch(() => undefined);
      }
    },
  });
}

/** The template a path names (`/templates/{id}/...`, `/templates/aliases/{alias}`), if any. */
function templateNamed(path: string): string | undefined {
  const m = TEMPLATE_PATH.exec(path);
  const first = m?.[1];
  if (first === undefined || ACTIONS.has(first)) return undefined;
  if (first === 'aliases') {
    const alias = m?.[2]?.split('/')[1];
    return alias === undefined || alias === '' ? undefined : safeDecode(alias);
  }
  return safeDecode(first);
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

async function templateNode(
  g: Gateway,
  nodes: readonly ClusterNode[],
  id: string,
): Promise<ClusterNode | undefined> {
  const builder = await g.state.templateBuilder(id);
  const live = liveNodes(nodes);
  return (
    live.find((n) => n.id === builder) ??
    live.find((n) => n.report.templates.some((t) => t.id === id || t.aliases.includes(id)))
  );
}

/** `DELETE /templates/{id}`. */
export async function deleteTemplate(g: Gateway, ctx: RequestContext): Promise<void> {
  const id = ctx.params.id ?? '';
  const snapshotNode = await g.state.snapshotNode(id);
  const nodes = liveNodes(await g.state.nodes());
  const targets = snapshotNode === undefined ? nodes : nodes.filter((n) => n.id === snapshotNode);
  const answers = await Promise.all(
    targets.map((n) =>
      changer(g, ctx).call(n.report.url, {
        method: 'DELETE',
        path: ctx.url.pathname,
        headers: ctx.req.headers,
      }),
    ),
  );
  const ok = answers.find((a) => a.status < 300);
  // Only once a node agreed (it checks the caller's tenant owns the template).
  if (ok !== undefined && snapshotNode === undefined) await g.state.removeTemplate(id);
  if (ok !== undefined && snapshotNode !== undefined) await g.state.unbindSnapshot(id);
  const first = ok ?? answers.find((a) => a.status !== 404) ?? answers[0];
  if (first === undefined)
    throw new AenvError('CLUSTER_NO_NODES', 'no node of the cluster is alive');
  relayAnswer(ctx.res, first);
}

/** `GET`/`DELETE /snapshots/{id}`: the node holding it, or the first node that knows it. */
export async function snapshotRequest(g: Gateway, ctx: RequestContext): Promise<void> {
  const id = ctx.params.id ?? '';
  const bound = await g.state.snapshotNode(id);
  const nodes = liveNodes(await g.state.nodes());
  const ordered = [...nodes.filter((n) => n.id === bound), ...nodes.filter((n) => n.id !== bound)];
  const body =
    ctx.req.method === 'GET' || ctx.req.method === 'DELETE' ? undefined : await readBody(ctx.req);
  let last;
  for (const n of ordered) {
    last = await g.nodes.call(n.report.url, {
      method: ctx.req.method ?? 'GET',
      path: `${ctx.url.pathname}${ctx.url.search}`,
      headers: ctx.req.headers,
      body,
    });
    if (last.status !== 404) break;
  }
  if (last === undefined)
    throw new AenvError('CLUSTER_NO_NODES', 'no node of the cluster is alive');
  if (ctx.req.method === 'DELETE' && last.status < 300) await g.state.unbindSnapshot(id);
  relayAnswer(ctx.res, last);
}
