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
export type { Template } from './orchestrator/template-catalog.js';
export { serveNode, type ServeNodeOptions } from './serve-node.js';
export { MicroVmLauncher, type MicroVmLauncherOptions } from './orchestrator/microvm-launcher.js';
export type { GuestProgressEvent, ProgressListener } from '@aenv/guest';
