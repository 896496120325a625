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
