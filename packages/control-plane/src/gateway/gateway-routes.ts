/**
 * The gateway's route table: the node API's routes, each with what the
 * gateway does for it (place, forward to the sandbox's node, aggregate,
 * answer from the cluster state), and the admin API (`admin: true`: the
 * caller's key needs the `admin` role). Anything else answers 404 JSON.
 *
 * @module
 */
import type { Gateway, RequestContext } from './gateway-context.js';
import * as admin from './admin-handler.js';
import { createSandbox } from './create-handler.js';
import { listSandboxes, listSnapshots, listTemplates } from './list-handler.js';
import { getNode, listNodes, setNodeStatus } from './node-handler.js';
import { sandboxRequest } from './sandbox-handler.js';
import { deleteTemplate, snapshotRequest, templateRequest } from './template-handler.js';
import { relayAnswer } from './relay.js';
import { liveNodes } from './list-handler.js';
import { AenvError } from '@aenv/shared';

/** One gateway route: a method (or any) and a path pattern whose groups are `params`. */
export interface GatewayRoute {
  /** An HTTP method, or `*` for any. */
  readonly method: string;
  readonly pattern: RegExp;
  readonly params?: readonly string[];
  /** Only for keys with the `admin` role. */
  readonly admin?: boolean;
  readonly handler: (g: Gateway, ctx: RequestContext) => Promise<void>;
}

async function openApi(g: Gateway, ctx: RequestContext): Promise<void> {
  const node = liveNodes(await g.state.nodes())[0];
  if (node === undefined)
    throw new AenvError('CLUSTER_NO_NODES', 'no node of the cluster is alive');
  relayAnswer(
    ctx.res,
    await g.nodes.call(node.report.url, { method: 'GET', path: '/openapi.json' }),
  );
}

/** The routes, first match wins. */
export const GATEWAY_ROUTES: readonly GatewayRoute[] = [
  { method: 'GET', pattern: /^\/openapi\.json$/, handler: openApi },
  { method: 'POST', pattern: /^\/(?:v2\/)?sandboxes$/, handler: createSandbox },
  { method: 'POST', pattern: /^\/sandboxes-cold$/, handler: createSandbox },
  { method: 'GET', pattern: /^\/sandboxes$/, handler: (g, c) => listSandboxes(g, c, 'v1') },
  { method: 'GET', pattern: /^\/v2\/sandboxes$/, handler: (g, c) => listSandboxes(g, c, 'v2') },
  {
    method: '*',
    pattern: /^\/(?:v2\/)?sandboxes\/([^/]+)(\/.*)?$/,
    params: ['id', 'rest'],
    handler: sandboxRequest,
  },
  { method: 'GET', pattern: /^\/nodes$/, handler: listNodes },
  { method: 'GET', pattern: /^\/nodes\/([^/]+)$/, params: ['id'], handler: getNode },
  // Draining a node is an operator's act: admin keys only.
  ...adminRoute('POST', /^\/nodes\/([^/]+)$/, setNodeStatus),
  { method: 'GET', pattern: /^\/snapshots$/, handler: listSnapshots },
  { method: '*', pattern: /^\/snapshots\/([^/]+)$/, params: ['id'], handler: snapshotRequest },
  { method: 'GET', pattern: /^\/(?:v2\/)?templates$/, handler: listTemplates },
  { method: 'DELETE', pattern: /^\/templates\/([^/]+)$/, params: ['id'], handler: deleteTemplate },
  { method: '*', pattern: /^\/(?:v\d+\/)?templates(?:\/.*)?$/, handler: templateRequest },
  ...adminRoute('GET', /^\/admin\/tenants$/, admin.listTenants),
  ...adminRoute('POST', /^\/admin\/tenants$/, admin.createTenant),
  ...adminRoute('GET', /^\/admin\/tenants\/([^/]+)$/, admin.getTenant),
  ...adminRoute('PATCH', /^\/admin\/tenants\/([^/]+)$/, admin.updateTenant),
  ...adminRoute('DELETE', /^\/admin\/tenants\/([^/]+)$/, admin.deleteTenant),
  ...adminRoute('GET', /^\/admin\/keys$/, admin.listKeys),
  ...adminRoute('POST', /^\/admin\/keys$/, admin.createKey),
  ...adminRoute('DELETE', /^\/admin\/keys\/([^/]+)$/, admin.revokeKey),
];

function adminRoute(
  method: string,
  pattern: RegExp,
  handler: GatewayRoute['handler'],
): GatewayRoute[] {
  return [{ method, pattern, params: ['id'], admin: true, handler }];
}

/** The route of a request and its path parameters, or undefined. */
export function matchGatewayRoute(
  method: string,
  path: string,
): { route: GatewayRoute; params: Record<string, string> } | undefined {
  for (const route of GATEWAY_ROUTES) {
    if (route.method !== '*' && route.method !== method) continue;
    const m = route.pattern.exec(path);
    if (m === null) continue;
    const params: Record<string, string> = {};
    (route.params ?? []).forEach((name, i) => {
      const v = m[i + 1];
      if (v !== undefined) params[name] = name === 'rest' ? v : safeDecode(v);
    });
    return { route, params };
  }
  return undefined;
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
