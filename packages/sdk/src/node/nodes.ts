/**
 * `client.nodes`: the nodes behind a gateway (a single node lists itself).
 * The route arrives with aenv's cluster work; a node without it answers
 * {@link NotSupportedError}.
 *
 * @module
 */
import { expectJson, type ApiClient } from '../api/api-client.js';
import type { NodeWire } from '../api/api-wire.js';
import type { RequestOptions } from '../api/http.js';

/** A node. */
export interface NodeInfo {
  readonly nodeId: string;
  readonly url: string | undefined;
  readonly status: string | undefined;
  readonly sandboxCount: number | undefined;
  readonly cpuCount: number | undefined;
  readonly memoryMB: number | undefined;
  readonly version: string | undefined;
}

/** Node operations. */
export class Nodes {
  readonly #api: ApiClient;

  constructor(api: ApiClient) {
    this.#api = api;
  }

  /** Every node with its capacity and usage. */
  async list(options: RequestOptions = {}): Promise<NodeInfo[]> {
    const answer = await this.#api.call({
      ...options,
      method: 'GET',
      path: '/nodes',
      feature: 'listing nodes',
    });
    return expectJson<NodeWire[]>(answer, 'list nodes', true).map((n) => ({
      nodeId: n.nodeID,
      url: n.url,
      status: n.status,
      sandboxCount: n.sandboxCount,
      cpuCount: n.cpuCount,
      memoryMB: n.memoryMB,
      version: n.version,
    }));
  }
}
