/**
 * The SDK's entry point: one client per node (or gateway), with a
 * sub-client per resource.
 *
 * ```ts
 * const aenv = new AenvClient(); // AENV_API_URL / AENV_API_KEY, or E2B_*
 * await using sbx = await aenv.sandboxes.create('base');
 * console.log((await sbx.commands.run('uname -a')).stdout);
 * ```
 *
 * @module
 */
import { Admin } from './admin/admin.js';
import { ApiClient } from './api/api-client.js';
import { resolveClientConfig, type ClientOptions, type ResolvedClientConfig } from './config.js';
import { Nodes } from './node/nodes.js';
import { Sandboxes } from './sandbox/sandboxes.js';
import { Snapshots } from './snapshot/snapshots.js';
import { Templates } from './template/templates.js';

/** A client of one aenv node or gateway. */
export class AenvClient {
  /** Sandboxes: create, connect, list, pause, resume, fork, snapshot, kill. */
  readonly sandboxes: Sandboxes;
  /** Templates: list, delete, pull, build. */
  readonly templates: Templates;
  /** Snapshots: list, delete. */
  readonly snapshots: Snapshots;
  /** Nodes: list. */
  readonly nodes: Nodes;
  /** Tenants and API keys (admin keys only). */
  readonly admin: Admin;
  /** The settings in use, with every default applied. */
  readonly config: ResolvedClientConfig;

  constructor(options: ClientOptions = {}) {
    this.config = resolveClientConfig(options);
    const api = new ApiClient(this.config);
    this.sandboxes = new Sandboxes(api);
    this.templates = new Templates(api);
    this.snapshots = new Snapshots(api);
    this.nodes = new Nodes(api);
    this.admin = new Admin(api);
  }
}
