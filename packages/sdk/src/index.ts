/**
 * `@aenv/sdk`: the TypeScript client of aenv nodes. Zero runtime
 * dependencies: the control plane is JSON over `fetch`, envd's Connect
 * protocol is spoken by a small built-in client.
 *
 * @module
 */
export { AenvClient } from './client.js';
export {
  DEFAULT_API_URL,
  DEFAULT_REQUEST_TIMEOUT_MS,
  resolveClientConfig,
  type ClientOptions,
  type ResolvedClientConfig,
} from './config.js';
export type { FetchLike, RequestOptions } from './api/http.js';
export {
  AenvSdkError,
  AlreadyExistsError,
  AuthenticationError,
  CommandExitError,
  ConflictError,
  ConnectionError,
  FileNotFoundError,
  InternalError,
  InvalidArgumentError,
  InvalidStateError,
  NotFoundError,
  NotSupportedError,
  PermissionDeniedError,
  ResourceExhaustedError,
  SandboxNotFoundError,
  SnapshotNotFoundError,
  TemplateNotFoundError,
  TimeoutError,
  UnavailableError,
  type AenvSdkErrorOptions,
  type CommandResult,
} from './errors.js';
export {
  ERROR_CLASS_BY_CODE,
  ERROR_CLASS_BY_STATUS,
  errorClassFor,
  errorFromAnswer,
  type ErrorClass,
} from './error-mapping.js';
export { Sandbox } from './sandbox/sandbox.js';
export {
  LONG_CALL_TIMEOUT_MS,
  Sandboxes,
  type CreateOptions,
  type ForkOptions,
  type ForkResult,
  type ListOptions,
  type NetworkUpdate,
  type SandboxMetric,
} from './sandbox/sandboxes.js';
export type { SandboxDetail, SandboxInfo } from './sandbox/sandbox-info.js';
export { CommandHandle, type OutputHandlers } from './envd/command-handle.js';
export {
  Commands,
  DEFAULT_COMMAND_TIMEOUT_MS,
  type ProcessInfo,
  type RunOptions,
} from './envd/commands.js';
export { Files, type EntryInfo, type FileData, type FileOptions } from './envd/files.js';
export { Pty, type PtyOptions, type PtySize } from './envd/pty.js';
export { Snapshots } from './snapshot/snapshots.js';
export type { SnapshotInfo } from './snapshot/snapshot-info.js';
export {
  Templates,
  type BuildContextOptions,
  type PullOptions,
  type TemplateInfo,
  type TemplateJobOptions,
} from './template/templates.js';
export type { ProgressEvent } from './template/progress-stream.js';
export { Nodes, type NodeInfo } from './node/nodes.js';
export { Admin, ApiKeys, Tenants } from './admin/admin.js';
export type {
  ApiKeyRole,
  ApiKeyView,
  CreateApiKeyBody,
  CreateTenantBody,
  CreatedApiKey,
  TenantQuotas,
  TenantQuotasUpdate,
  TenantUsage,
  TenantView,
} from './admin/admin-wire.js';
