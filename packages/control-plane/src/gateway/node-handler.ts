/**
 * Nodes through the gateway, from the cluster state (no node is asked):
 * `GET /nodes` (every registered node, lost ones included),
 * `GET /nodes/{id}`, and `POST /nodes/{id}` `{status: "draining" | "ready"}`
 * — E2B's node status change: a draining node gets no new sandboxes, keeps
 * running its own, and its paused sandboxes resume on other nodes.
 *
 * @module
 */
import { AenvError, LOG_FIELDS } from '@aenv/shared';
import { nodeView } from '../state/cluster-node.js';
import type { Gateway, RequestContext } from './gateway-context.js';
import { parseJsonObject, readBody, sendJson } from './http-io.js';

function notFound(id: string): AenvError {
  return new AenvError('CLUSTER_NODE_NOT_FOUND', `node ${id} not found`, {
    fields: { nodeId: id },
  });
}

/** `GET /nodes`. */
export async function listNodes(g: Gateway, ctx: RequestContext): Promise<void> {
  sendJson(ctx.res, 200, (await g.state.nodes()).map(nodeView));
}

/** `GET /nodes/{id}`. */
export async function getNode(g: Gateway, ctx: RequestContext): Promise<void> {
  const id = ctx.params.id ?? '';
  const node = await g.state.node(id);
  if (node === undefined) throw notFound(id);
  sendJson(ctx.res, 200, nodeView(node));
}

/** `POST /nodes/{id}` `{status}`. */
export async function setNodeStatus(g: Gateway, ctx: RequestContext): Promise<void> {
  const id = ctx.params.id ?? '';
  const status = parseJsonObject(await readBody(ctx.req)).status;
  if (status !== 'draining' && status !== 'ready') {
    throw new AenvError('API_BODY_INVALID', "field 'status': expected 'draining' or 'ready'", {
      fields: { field: 'status' },
    });
  }
  if ((await g.state.node(id)) === undefined) throw notFound(id);
  await g.state.setNodeStatus(id, status);
  g.logger.info('node status set', { [LOG_FIELDS.nodeId]: id, status });
  ctx.res.writeHead(204).end();
}
