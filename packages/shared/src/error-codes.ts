/**
 * The registry of every stable error code aenv emits, with its category.
 *
 * A code names one meaningful condition (`SBX_NOT_FOUND`), never a call site.
 * The category carries the HTTP semantics (see `http-error.ts`). Every code
 * here must be documented in `docs/errors.md`; a test keeps the two in sync.
 * Add codes here, in the section of the package that raises them.
 *
 * @module
 */

/** The closed set of error categories (DESIGN.md §3 "Errors"). */
export const ERROR_CATEGORIES = [
  'NotFound',
  'AlreadyExists',
  'InvalidArgument',
  'FailedPrecondition',
  'Conflict',
  'ResourceExhausted',
  'Unavailable',
  'NotSupported',
  'Unauthenticated',
  'PermissionDenied',
  'Internal',
] as const;

/** One of {@link ERROR_CATEGORIES}. */
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

/** What the registry records about one code. */
export interface ErrorCodeInfo {
  readonly category: ErrorCategory;
  /**
   * The HTTP status when it is not the category's own (a full disk is
   * `ResourceExhausted` but answers 507 Insufficient Storage, not 429).
   */
  readonly httpStatus?: number;
}

/** Every error code, by package. Keep each section sorted. */
export const ERROR_CODES = {
  // generic, any package
  INTERNAL: { category: 'Internal' },
  INVALID_ARGUMENT: { category: 'InvalidArgument' },
  NOT_SUPPORTED: { category: 'NotSupported' },
  // shared
  CLEANUP_FAILED: { category: 'Internal' },
  CONFIG_FILE_UNREADABLE: { category: 'InvalidArgument' },
  CONFIG_INVALID_VALUE: { category: 'InvalidArgument' },
  CONFIG_UNKNOWN_KEY: { category: 'InvalidArgument' },
  ID_INVALID: { category: 'InvalidArgument' },
  // tenants and API keys, node and gateway alike (codes start with TENANT_, API_KEY_)
  API_KEY_NOT_FOUND: { category: 'NotFound' },
  TENANT_ADMIN_REQUIRED: { category: 'PermissionDenied' },
  TENANT_EXISTS: { category: 'AlreadyExists' },
  TENANT_ID_INVALID: { category: 'InvalidArgument' },
  TENANT_NOT_EMPTY: { category: 'FailedPrecondition' },
  TENANT_NOT_FOUND: { category: 'NotFound' },
  TENANT_QUOTA_EXCEEDED: { category: 'ResourceExhausted' },
  // storage (codes start with BLOB_, LAYER_, NBD_, STORAGE_)
  BLOB_NOT_FOUND: { category: 'NotFound' },
  BLOB_STORE_UNAVAILABLE: { category: 'Unavailable' },
  LAYER_CORRUPT: { category: 'Internal' },
  LAYER_NOT_FOUND: { category: 'NotFound' },
  LAYER_UNSUPPORTED_VERSION: { category: 'NotSupported' },
  NBD_EXPORT_EXISTS: { category: 'AlreadyExists' },
  NBD_EXPORT_NOT_FOUND: { category: 'NotFound' },
  NBD_SERVER_CLOSED: { category: 'FailedPrecondition' },
  NBD_WORKER_FAILED: { category: 'Unavailable' },
  STORAGE_CACHE_LOCKED: { category: 'FailedPrecondition' },
  STORAGE_CLOSED: { category: 'FailedPrecondition' },
  STORAGE_NO_SPACE: { category: 'ResourceExhausted', httpStatus: 507 },
  STORAGE_OUT_OF_RANGE: { category: 'InvalidArgument' },
  STORAGE_READ_ONLY: { category: 'FailedPrecondition' },
  STORAGE_UPPER_CORRUPT: { category: 'Internal' },
  STORAGE_UPPER_EXISTS: { category: 'AlreadyExists' },
  STORAGE_UPPER_MISMATCH: { category: 'FailedPrecondition' },
  STORAGE_UPPER_NOT_FOUND: { category: 'NotFound' },
  // vmm (codes start with VMM_)
  VMM_API_ERROR: { category: 'Internal' },
  VMM_DRIVER_UNAVAILABLE: { category: 'FailedPrecondition' },
  VMM_DRIVE_ATTACH_FAILED: { category: 'Internal' },
  VMM_INVALID_STATE: { category: 'FailedPrecondition' },
  VMM_JAIL_EXHAUSTED: { category: 'ResourceExhausted' },
  VMM_JAIL_FAILED: { category: 'Internal' },
  VMM_NOT_SUPPORTED: { category: 'NotSupported' },
  VMM_PROCESS_EXITED: { category: 'Internal' },
  VMM_QMP_ERROR: { category: 'Internal' },
  VMM_RESTORE_FAILED: { category: 'Internal' },
  VMM_SNAPSHOT_FAILED: { category: 'Internal' },
  VMM_SNAPSHOT_INCOMPATIBLE: { category: 'FailedPrecondition' },
  VMM_SNAPSHOT_INVALID: { category: 'InvalidArgument' },
  VMM_START_FAILED: { category: 'Internal' },
  VMM_TIMEOUT: { category: 'Unavailable' },
  // network (codes start with NET_)
  NET_COMMAND_FAILED: { category: 'Internal' },
  NET_MANAGER_CLOSED: { category: 'Unavailable' },
  NET_POLICY_INVALID: { category: 'InvalidArgument' },
  NET_POLICY_UNSUPPORTED: { category: 'InvalidArgument' },
  NET_POOL_EXHAUSTED: { category: 'ResourceExhausted' },
  NET_PREFIX_IN_USE: { category: 'FailedPrecondition' },
  NET_SLOT_RELEASED: { category: 'FailedPrecondition' },
  // envd (codes start with ENVD_)
  ENVD_ALREADY_EXISTS: { category: 'AlreadyExists' },
  ENVD_CWD_NOT_FOUND: { category: 'InvalidArgument' },
  ENVD_ENCODING_UNSUPPORTED: { category: 'InvalidArgument' },
  ENVD_IS_A_DIRECTORY: { category: 'InvalidArgument' },
  ENVD_NETWORK_MOUNT: { category: 'InvalidArgument' },
  ENVD_NOT_A_DIRECTORY: { category: 'InvalidArgument' },
  ENVD_NO_SPACE: { category: 'ResourceExhausted', httpStatus: 507 },
  ENVD_PATH_INVALID: { category: 'InvalidArgument' },
  ENVD_PATH_NOT_FOUND: { category: 'NotFound' },
  ENVD_PATH_OUTSIDE_ROOT: { category: 'PermissionDenied' },
  ENVD_PERMISSION_DENIED: { category: 'PermissionDenied' },
  ENVD_PROCESS_INPUT_INVALID: { category: 'FailedPrecondition' },
  ENVD_PROCESS_NOT_FOUND: { category: 'NotFound' },
  ENVD_ROUTE_NOT_FOUND: { category: 'NotFound' },
  ENVD_SIGNATURE_EXPIRED: { category: 'Unauthenticated' },
  ENVD_SIGNATURE_INVALID: { category: 'Unauthenticated' },
  ENVD_SPAWN_FAILED: { category: 'InvalidArgument' },
  ENVD_TOKEN_INVALID: { category: 'Unauthenticated' },
  ENVD_UPLOAD_INVALID: { category: 'InvalidArgument' },
  ENVD_USER_UNKNOWN: { category: 'Unauthenticated' },
  ENVD_WATCHER_NOT_FOUND: { category: 'NotFound' },
  // guest (codes start with GUEST_)
  GUEST_BUILD_FAILED: { category: 'Internal' },
  GUEST_CACHE_BUSY: { category: 'Unavailable' },
  GUEST_ENVD_BUNDLE_INVALID: { category: 'FailedPrecondition' },
  GUEST_KERNEL_UNAVAILABLE: { category: 'Unavailable' },
  GUEST_TOOL_MISSING: { category: 'FailedPrecondition' },
  // control-plane, and the node's cluster pieces (codes start with CLUSTER_)
  CLUSTER_MOVE_IN_PROGRESS: { category: 'Conflict' },
  CLUSTER_NO_CAPACITY: { category: 'ResourceExhausted' },
  CLUSTER_NO_NODES: { category: 'Unavailable' },
  CLUSTER_NODE_LOST: { category: 'Unavailable' },
  CLUSTER_NODE_NOT_FOUND: { category: 'NotFound' },
  CLUSTER_NODE_UNREACHABLE: { category: 'Unavailable' },
  CLUSTER_STATE_UNAVAILABLE: { category: 'Unavailable' },
  CLUSTER_TRANSFER_FAILED: { category: 'Internal' },
  // ui (codes start with UI_)
  UI_NOT_BUILT: { category: 'Unavailable' },
  UI_ORIGIN_REJECTED: { category: 'PermissionDenied' },
  // server (codes start with SBX_, TEMPLATE_, SNAPSHOT_, API_, PROXY_, NODE_, IMAGE_, BUILD_)
  API_BODY_INVALID: { category: 'InvalidArgument' },
  API_ROUTE_NOT_FOUND: { category: 'NotFound' },
  API_UNAUTHENTICATED: { category: 'Unauthenticated' },
  BUILD_FAILED: { category: 'Internal' },
  BUILD_FILES_MISSING: { category: 'FailedPrecondition' },
  BUILD_IN_PROGRESS: { category: 'Conflict' },
  BUILD_NOT_FOUND: { category: 'NotFound' },
  BUILD_READY_TIMEOUT: { category: 'Unavailable' },
  BUILD_STEP_FAILED: { category: 'InvalidArgument' },
  BUILD_STEP_INVALID: { category: 'InvalidArgument' },
  IMAGE_CONVERT_FAILED: { category: 'Internal' },
  IMAGE_DIGEST_MISMATCH: { category: 'Unavailable' },
  IMAGE_INVALID: { category: 'InvalidArgument' },
  IMAGE_NOT_FOUND: { category: 'NotFound' },
  IMAGE_REFERENCE_INVALID: { category: 'InvalidArgument' },
  IMAGE_REGISTRY_DENIED: { category: 'PermissionDenied' },
  IMAGE_REGISTRY_NOT_ALLOWED: { category: 'PermissionDenied' },
  IMAGE_REGISTRY_UNAVAILABLE: { category: 'Unavailable' },
  IMAGE_TOO_LARGE: { category: 'ResourceExhausted' },
  IMAGE_UNSUPPORTED: { category: 'NotSupported' },
  NODE_SHUTTING_DOWN: { category: 'Unavailable' },
  NODE_STATE_UNAVAILABLE: { category: 'Unavailable' },
  PROXY_TRAFFIC_TOKEN_INVALID: { category: 'Unauthenticated' },
  SBX_CAPACITY: { category: 'ResourceExhausted' },
  SBX_DISK_FAILED: { category: 'Internal' },
  SBX_ENVD_FAILED: { category: 'Internal' },
  SBX_INVALID_STATE: { category: 'FailedPrecondition' },
  SBX_KILLED: { category: 'Conflict' },
  SBX_NOT_FOUND: { category: 'NotFound' },
  SBX_PAUSE_FAILED: { category: 'Internal' },
  SBX_SNAPSHOT_FAILED: { category: 'Internal' },
  SBX_START_FAILED: { category: 'Internal' },
  SBX_START_TIMEOUT: { category: 'Unavailable' },
  SNAPSHOT_NAME_TAKEN: { category: 'AlreadyExists' },
  SNAPSHOT_NOT_FOUND: { category: 'NotFound' },
  TEMPLATE_NOT_FOUND: { category: 'NotFound' },
  TEMPLATE_PROTECTED: { category: 'FailedPrecondition' },
} as const satisfies Record<string, ErrorCodeInfo>;

/** A stable error code: one key of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The category a code belongs to. */
export function categoryOf(code: ErrorCode): ErrorCategory {
  return ERROR_CODES[code].category;
}

/** Whether a string is a registered error code. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
