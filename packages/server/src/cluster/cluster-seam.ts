/**
 * What `startNode` takes from a clustered node's membership: orchestrator
 * hooks, the extra API key the gateway uses, and the cluster routes. A
 * standalone node has none of it.
 *
 * @module
 */
import type { NodeStatus } from '@aenv/shared';
import type { Route } from '../api/router.js';
import type { OrchestratorHooks } from '../orchestrator/orchestrator-hooks.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';

/** The cluster's part in a node. */
export interface NodeClusterSeam {
  readonly nodeId: string;
  readonly hooks: OrchestratorHooks;
  /** Keys accepted besides the node's own (the gateway's). */
  readonly apiKeys: readonly string[];
  /** The node's cluster routes, over its orchestrator. */
  routes(orchestrator: Orchestrator): readonly Route[];
  /** After recovery, before anything resumes: drops paused sandboxes that moved away. */
  recovered(orchestrator: Orchestrator): Promise<void>;
  /** The status an operator set for this node. */
  status(): NodeStatus;
}
