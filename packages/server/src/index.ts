/**
 * `@aenv/server`: the aenv node daemon.
 *
 * @module
 */
export { loadNodeConfig, nodeConfigSchema, type NodeConfig } from './config.js';
export { createLogger, silentLogger, type Logger, type LogLevel } from './log.js';
export { startNode, type RunningNode, type StartNodeOptions } from './node.js';
export type {
  LaunchedSandbox,
  LaunchExit,
  LaunchSpec,
  SandboxLauncher,
} from './orchestrator/launcher.js';
export type { GuestAddress, SandboxRecord, SandboxState } from './orchestrator/sandbox.js';
export { CRASH_POINTS, type CrashPointName } from './orchestrator/crash-point.js';
export type { TemplateRecord } from './template/template-record.js';
export type { SnapshotRecord } from './snapshot/snapshot-record.js';
export { openNodeState, type NodeState } from './store/node-state.js';
export type { MachineSnapshot, LaunchSource, SuspendOptions } from './orchestrator/launcher.js';
export { serveNode, type ServedNode, type ServeNodeOptions } from './serve-node.js';
export {
  MicroVmLauncher,
  type MicroVmLauncherOptions,
  type MicroVmSandbox,
} from './orchestrator/microvm-launcher.js';
export {
  RestorePool,
  type RestorePoolLevel,
  type RestorePoolOptions,
} from './orchestrator/restore-pool.js';
export {
  restorePoolConfigSchema,
  type RestorePoolConfig,
} from './orchestrator/restore-pool-config.js';
export {
  POOLED_PREFIX,
  preparePooledMachine,
  type PooledMachine,
  type PooledMachineDeps,
} from './orchestrator/pooled-machine.js';
export { NodeStorage, UPPER_DIR_NAME, type NodeStorageOptions } from './storage/node-storage.js';
export type { BaseImageResult } from './storage/base-image-import.js';
export {
  EngineDisk,
  type OpenImageRequest,
  type SandboxDisk,
  type SandboxDisks,
} from './storage/sandbox-disk.js';
export type { GuestProgressEvent, ProgressListener } from '@aenv/guest';
export {
  clusterConfigSchema,
  resolveClusterSettings,
  type ClusterConfig,
  type ClusterSettings,
} from './cluster/cluster-config.js';
export { ClusterMember, type JoinOptions } from './cluster/cluster-member.js';
export type { NodeClusterSeam } from './cluster/cluster-seam.js';
export { compatKey, describeNode, hostCapacity, nodeReport } from './cluster/node-report.js';
export { SharedSnapshots, type SnapshotExport } from './cluster/shared-snapshots.js';
export type { OrchestratorHooks } from './orchestrator/orchestrator-hooks.js';
