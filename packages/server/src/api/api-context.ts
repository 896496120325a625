/**
 * What route handlers depend on: the orchestrator, the metrics, the
 * tenants and their quotas, and the node settings that shape answers.
 *
 * @module
 */
import type { NodeMetrics } from '../metrics/node-metrics.js';
import type { SandboxMetricsSampler } from '../metrics/sandbox-metrics-sampler.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { ColdStartRequest } from '../template/cold-start.js';
import type { TemplateCatalog } from '../template/template-catalog.js';
import type { NodeView } from '@aenv/shared';
import type { TemplateService } from '../template/template-service.js';
import type { SandboxRecord } from '../orchestrator/sandbox.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { TenantStore } from '../store/tenant-store.js';
import type { TenantQuotaGuard } from './tenant-quotas.js';

/** Dependencies of the route handlers. */
export interface ApiContext {
  readonly orchestrator: Orchestrator;
  readonly templates: TemplateCatalog;
  /** Snapshots (to check who owns one a create names). */
  readonly snapshots: SnapshotCatalog;
  /** Tenants and API keys (`/admin/...`). */
  readonly tenants: TenantStore;
  /** Per-tenant quotas, checked and reserved by every start. */
  readonly quotas: TenantQuotaGuard;
  readonly metrics: NodeMetrics;
  /** Per-sandbox resource samples from envd. */
  readonly sandboxMetrics: SandboxMetricsSampler;
  /** Domain returned to SDKs for `{port}-{id}.{domain}` hosts; null = the client's default. */
  readonly domain: string | null;
  /** Longest TTL a client may ask for, in seconds. */
  readonly maxTimeoutSeconds: number;
  /** What a TTL expiry does when a create does not say. */
  readonly defaultOnTimeout: 'pause' | 'kill';
  /** `$AENV_HOME`: sandbox directories (console logs) are under `sandboxes/<id>/`. */
  readonly home: string;
  /** This node as `GET /nodes` shows it. */
  readonly node?: () => Promise<NodeView>;
  /** Template builds and image pulls; absent on nodes without an image service. */
  readonly templateService?: TemplateService | undefined;
  /** Cold starts from images; absent likewise. */
  readonly coldStart?: ((req: ColdStartRequest) => Promise<SandboxRecord>) | undefined;
  /** Machine shape of builds and cold starts that do not give one. */
  readonly defaultShape?: { readonly vcpus: number; readonly memoryMiB: number } | undefined;
}
