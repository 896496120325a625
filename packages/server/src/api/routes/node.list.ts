/**
 * `GET /nodes` and `GET /nodes/{id}` on a node: the node itself (its id,
 * capacity, usage, templates), in the shape the gateway lists a whole
 * cluster in (`NodeView`). A node only knows itself: any other id is 404.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { ApiContext } from '../api-context.js';
import type { Reply, RouteContext } from '../router.js';

async function self(api: ApiContext) {
  if (api.node === undefined) {
    throw new AenvError('NOT_SUPPORTED', 'this node does not describe itself');
  }
  return api.node();
}

/** The list-nodes handler. */
export function listNodes(api: ApiContext) {
  return async (): Promise<Reply> => ({ status: 200, body: [await self(api)] });
}

/** The get-node handler. */
export function getNode(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const view = await self(api);
    const id = ctx.params.id ?? '';
    if (id !== view.nodeID) {
      throw new AenvError(
        'CLUSTER_NODE_NOT_FOUND',
        `node ${id} not found (this node is ${view.nodeID})`,
        {
          fields: { nodeId: id },
        },
      );
    }
    return { status: 200, body: view };
  };
}
