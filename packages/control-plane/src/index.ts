/**
 * `@aenv/control-plane`: the gateway and scheduler that put many aenv
 * nodes behind one endpoint with the node API. State lives in Redis
 * (`@aenv/shared` `cluster-wire.ts` has the layout), so gateway replicas
 * share it and a restart loses nothing. See docs/cluster.md.
 *
 * @module
 */
export {
  nodeView,
  type ClusterNode,
  type ClusterNodeStatus,
  type PendingUse,
} from './state/cluster-node.js';
export { ClusterState, type NewBinding } from './state/cluster-state.js';
export { connectRedis, createRedis, redactUrl } from './state/redis-connection.js';
export {
  DEFAULT_LIMITS,
  findCandidates,
  holdsTemplate,
  loadWith,
  withPlacement,
  type Candidate,
  type CandidateTraits,
  type PlacementLimits,
  type PlacementRequest,
  type RejectReason,
  type Rejections,
} from './scheduler/placement.js';
export {
  DEFAULT_AFFINITY_WEIGHT,
  STRATEGY_NAMES,
  createStrategy,
  packStrategy,
  randomStrategy,
  roundRobinStrategy,
  spreadStrategy,
  type PlacementStrategy,
  candidateSet,
  type CandidateSet,
  type StrategyName,
} from './scheduler/strategies.js';
export { PlacementIndex, type RecordOptions } from './scheduler/placement-index.js';
export {
  Scheduler,
  placeOne,
  planBatch,
  type NodeShare,
  type Placement,
  type SchedulerOptions,
} from './scheduler/scheduler.js';
export { syntheticNode, type SyntheticNodeOptions } from './scheduler/synthetic-node.js';
export {
  controlPlaneConfigSchema,
  loadControlPlaneConfig,
  nodeApiKey,
  tenantQuotaDefaults,
  type ControlPlaneConfig,
} from './config/control-plane-config.js';
export { runGateway, runScheduler, schedulerOf, type RunningScheduler } from './control-plane.js';
export {
  startGateway,
  type GatewayOptions,
  type RunningGateway,
} from './gateway/gateway-server.js';
export { GatewayMetrics } from './gateway/gateway-metrics.js';
export { DEFAULT_TENANT, TenantKeys } from './gateway/tenant-keys.js';
export { TenantAuth, type Caller } from './tenants/tenant-auth.js';
export {
  TenantQuotaGate,
  type QuotaAsk,
  type Reservation,
  type TenantQuotaGateOptions,
} from './tenants/tenant-quota.js';
export { TenantStore, tenantStoreKeys, type StoredTenant } from './tenants/tenant-store.js';
export {
  Reconciler,
  type ReconcileResult,
  type ReconcilerOptions,
} from './scheduler/reconciler.js';
export { createLogger, errorFields, silentLogger, type Logger, type LogLevel } from './log.js';
