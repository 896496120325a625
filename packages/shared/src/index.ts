/**
 * `@aenv/shared`: the vocabulary every aenv package shares.
 *
 * @module
 */
export { AenvError, toAenvError, type AenvErrorOptions, type ErrorFields } from './aenv-error.js';
export { Cleanup, type CleanupOptions, type CleanupStep } from './cleanup.js';
export {
  DEFAULT_CLUSTER_KEY_PREFIX,
  clusterKeys,
  toNodeView,
  type ClusterKeys,
  type NodeAdmin,
  type NodeCapacity,
  type NodeReport,
  type NodeStatus,
  type NodeTemplate,
  type NodeUsage,
  type NodeView,
  type SandboxBinding,
  type SharedTemplate,
} from './cluster-wire.js';
export { ConfigField, field, type FieldSpec, type ValueSource } from './config-field.js';
export {
  describeConfig,
  loadConfig,
  type ConfigFieldDoc,
  type ConfigSchema,
  type LoadConfigOptions,
  type ResolvedConfig,
} from './config-loader.js';
export {
  ERROR_CATEGORIES,
  ERROR_CODES,
  categoryOf,
  isErrorCode,
  type ErrorCategory,
  type ErrorCode,
  type ErrorCodeInfo,
} from './error-codes.js';
export {
  HTTP_STATUS_BY_CATEGORY,
  httpStatusOf,
  toHttpError,
  type ErrorBody,
  type HttpError,
} from './http-error.js';
export {
  FuzzRandom,
  fuzzIterations,
  fuzzSeed,
  runFuzz,
  type FuzzRunOptions,
  type FuzzRunResult,
  type JsonValue,
} from './fuzz-random.js';
export { ID_LENGTH, assertName, isId, isName, newApiKey, newId, newToken } from './ids.js';
export { LOG_FIELDS, type LogField } from './log-fields.js';
export { proxyTargetOf, type ProxyTarget } from './proxy-target.js';
export { parseJsonObject, readBody } from './http-body.js';
export {
  API_KEY_PREFIX_LENGTH,
  DEFAULT_TENANT,
  TENANT_HEADER,
  TENANT_QUOTA_NAMES,
  hashApiKey,
  parseTenantId,
  parseTenantQuotas,
  type ApiKeyRole,
  type ApiKeyView,
  type CreateApiKeyBody,
  type CreateTenantBody,
  type CreatedApiKey,
  type TenantQuotas,
  type TenantUsage,
  type TenantView,
  type UpdateTenantBody,
} from './tenant-wire.js';
