/**
 * The whole route table of the node API, on one screen.
 *
 * @module
 */
import type { ApiContext } from './api-context.js';
import type { Route } from './router.js';
import {
  createKey,
  createTenant,
  deleteTenant,
  getTenant,
  listKeys,
  listTenants,
  revokeKey,
  updateTenant,
} from './routes/admin.tenants.js';
import { health } from './routes/health.js';
import { getNode, listNodes } from './routes/node.list.js';
import { nodeMetrics } from './routes/node.metrics.js';
import { openApi } from './routes/openapi.js';
import { coldStartSandbox } from './routes/sandbox.cold.js';
import {
  requestTemplateBuild,
  startTemplateBuild,
  templateBuildStatus,
} from './routes/template.build.js';
import { templateFilesLink, uploadTemplateFiles } from './routes/template.files.js';
import {
  deleteTemplate,
  getTemplate,
  getTemplateAlias,
  listTemplateViews,
} from './routes/template.get.js';
import { buildTemplate, pullTemplate } from './routes/template.stream.js';
import {
  createSnapshot,
  deleteSnapshot,
  getSnapshot,
  listSnapshots,
} from './routes/snapshot.routes.js';
import { connectSandbox, resumeSandbox } from './routes/sandbox.connect.js';
import { forkSandbox } from './routes/sandbox.fork.js';
import { createSandbox } from './routes/sandbox.create.js';
import { getSandbox } from './routes/sandbox.get.js';
import { killSandbox } from './routes/sandbox.kill.js';
import { listSandboxesV1, listSandboxesV2 } from './routes/sandbox.list.js';
import { getSandboxLogs } from './routes/sandbox.logs.js';
import { getSandboxMetrics } from './routes/sandbox.metrics.js';
import { updateSandboxNetwork } from './routes/sandbox.network.js';
import { pauseSandbox } from './routes/sandbox.pause.js';
import { refreshSandbox } from './routes/sandbox.refreshes.js';
import { setSandboxTimeout } from './routes/sandbox.timeout.js';

/** Every route of the node API. */
export function routeTable(api: ApiContext): Route[] {
  return [
    { method: 'GET', path: '/health', handler: health, public: true },
    { method: 'GET', path: '/metrics', handler: nodeMetrics(api), public: true },
    { method: 'GET', path: '/openapi.json', handler: openApi(), public: true },
    { method: 'GET', path: '/nodes', handler: listNodes(api) },
    { method: 'GET', path: '/nodes/:id', handler: getNode(api) },
    { method: 'POST', path: '/sandboxes', handler: createSandbox(api, 'v1'), idempotent: true },
    { method: 'POST', path: '/v2/sandboxes', handler: createSandbox(api, 'v2'), idempotent: true },
    { method: 'GET', path: '/sandboxes', handler: listSandboxesV1(api) },
    { method: 'GET', path: '/v2/sandboxes', handler: listSandboxesV2(api) },
    { method: 'GET', path: '/sandboxes/:id', handler: getSandbox(api) },
    { method: 'DELETE', path: '/sandboxes/:id', handler: killSandbox(api) },
    { method: 'POST', path: '/sandboxes/:id/timeout', handler: setSandboxTimeout(api) },
    { method: 'PUT', path: '/sandboxes/:id/network', handler: updateSandboxNetwork(api) },
    { method: 'POST', path: '/sandboxes/:id/connect', handler: connectSandbox(api, 'v1') },
    { method: 'POST', path: '/v2/sandboxes/:id/connect', handler: connectSandbox(api, 'v2') },
    { method: 'POST', path: '/sandboxes/:id/resume', handler: resumeSandbox(api) },
    { method: 'POST', path: '/sandboxes/:id/pause', handler: pauseSandbox(api) },
    { method: 'POST', path: '/sandboxes/:id/refreshes', handler: refreshSandbox(api) },
    { method: 'POST', path: '/sandboxes/:id/fork', handler: forkSandbox(api), idempotent: true },
    { method: 'POST', path: '/sandboxes/:id/snapshots', handler: createSnapshot(api) },
    { method: 'GET', path: '/snapshots', handler: listSnapshots(api) },
    { method: 'GET', path: '/snapshots/:id', handler: getSnapshot(api) },
    { method: 'DELETE', path: '/snapshots/:id', handler: deleteSnapshot(api) },
    { method: 'GET', path: '/templates', handler: listTemplateViews(api) },
    { method: 'GET', path: '/v2/templates', handler: listTemplateViews(api) },
    { method: 'GET', path: '/templates/:id', handler: getTemplate(api) },
    { method: 'GET', path: '/templates/aliases/:alias', handler: getTemplateAlias(api) },
    { method: 'DELETE', path: '/templates/:id', handler: deleteTemplate(api) },
    { method: 'POST', path: '/v3/templates', handler: requestTemplateBuild(api) },
    {
      method: 'POST',
      path: '/v2/templates/:id/builds/:buildID',
      handler: startTemplateBuild(api),
    },
    {
      method: 'GET',
      path: '/templates/:id/builds/:buildID/status',
      handler: templateBuildStatus(api),
    },
    { method: 'GET', path: '/templates/:id/files/:hash', handler: templateFilesLink(api) },
    { method: 'PUT', path: '/templates/:id/files/:hash', handler: uploadTemplateFiles(api) },
    { method: 'POST', path: '/templates/pull', handler: pullTemplate(api) },
    { method: 'POST', path: '/templates/build', handler: buildTemplate(api) },
    { method: 'POST', path: '/sandboxes-cold', handler: coldStartSandbox(api) },
    { method: 'GET', path: '/sandboxes/:id/logs', handler: getSandboxLogs(api) },
    {
      method: 'GET',
      path: '/sandboxes/:id/metrics',
      handler: getSandboxMetrics(api),
    },
    { method: 'GET', path: '/admin/tenants', handler: listTenants(api), admin: true },
    { method: 'POST', path: '/admin/tenants', handler: createTenant(api), admin: true },
    { method: 'GET', path: '/admin/tenants/:tenantId', handler: getTenant(api), admin: true },
    { method: 'PATCH', path: '/admin/tenants/:tenantId', handler: updateTenant(api), admin: true },
    { method: 'DELETE', path: '/admin/tenants/:tenantId', handler: deleteTenant(api), admin: true },
    { method: 'GET', path: '/admin/keys', handler: listKeys(api), admin: true },
    { method: 'POST', path: '/admin/keys', handler: createKey(api), admin: true },
    { method: 'DELETE', path: '/admin/keys/:keyId', handler: revokeKey(api), admin: true },
  ];
}
