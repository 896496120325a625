/**
 * How the SDK reaches one sandbox's envd: through the node's data-plane
 * proxy at the sandbox URL, naming the sandbox with `E2b-Sandbox-Id` and
 * `E2b-Sandbox-Port: 49983` (the routing the e2b SDKs use with
 * `E2B_SANDBOX_URL`), with the sandbox's access token in `X-Access-Token`.
 * The token can change when a sandbox is resumed, so it is read per call.
 *
 * @module
 */
import type { FetchLike } from '../api/http.js';
import { ConnectTransport } from '../connect/connect-transport.js';

/** The port envd listens on inside every sandbox. */
export const ENVD_PORT = 49983;

/** One sandbox's envd endpoint. */
export class EnvdConnection {
  readonly sandboxId: string;
  readonly sandboxUrl: string;
  readonly fetch: FetchLike;
  /** The Connect client for envd's RPCs. */
  readonly rpc: ConnectTransport;
  /** `X-Access-Token`; undefined for sandboxes created without one. */
  accessToken: string | undefined;

  constructor(options: {
    sandboxId: string;
    sandboxUrl: string;
    fetch: FetchLike;
    accessToken: string | undefined;
  }) {
    this.sandboxId = options.sandboxId;
    this.sandboxUrl = options.sandboxUrl.replace(/\/+$/, '');
    this.fetch = options.fetch;
    this.accessToken = options.accessToken;
    this.rpc = new ConnectTransport({
      baseUrl: this.sandboxUrl,
      fetch: options.fetch,
      headers: () => this.headers(),
    });
  }

  /** The routing and auth headers of every envd request. */
  headers(port = ENVD_PORT): Record<string, string> {
    return {
      'e2b-sandbox-id': this.sandboxId,
      'e2b-sandbox-port': String(port),
      ...(this.accessToken === undefined ? {} : { 'x-access-token': this.accessToken }),
    };
  }
}

/** The `Authorization` header that makes envd act as `user` (e2b-protocol.md §3.8). */
export function userHeader(user: string | undefined): Record<string, string> {
  if (user === undefined) return {};
  return { authorization: `Basic ${btoa(`${user}:`)}` };
}
