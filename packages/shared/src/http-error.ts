/**
 * The one place where an error becomes an HTTP status and a JSON body.
 *
 * Every non-2xx answer of every aenv HTTP surface is
 * `{"code": <http status>, "message": "...", "error_code": "<stable code>"}`:
 * `code` equal to the status is what the e2b SDKs parse; `error_code` (the
 * name E2B's newer spec gives this optional field) carries our stable code.
 *
 * @module
 */
import { AenvError } from './aenv-error.js';
import { ERROR_CODES, type ErrorCategory, type ErrorCode } from './error-codes.js';

/** The HTTP status of each category. Each category has exactly one. */
export const HTTP_STATUS_BY_CATEGORY: Readonly<Record<ErrorCategory, number>> = Object.freeze({
  NotFound: 404,
  AlreadyExists: 409,
  InvalidArgument: 400,
  FailedPrecondition: 409,
  Conflict: 409,
  ResourceExhausted: 429,
  Unavailable: 503,
  NotSupported: 501,
  Unauthenticated: 401,
  PermissionDenied: 403,
  Internal: 500,
});

/** The JSON body of every error answer. */
export interface ErrorBody {
  /** The HTTP status, repeated (the e2b SDKs read it from the body). */
  readonly code: number;
  /** A human-readable explanation. */
  readonly message: string;
  /** The stable aenv error code. */
  readonly error_code: ErrorCode;
}

/** An HTTP answer for an error. */
export interface HttpError {
  readonly status: number;
  readonly body: ErrorBody;
  /**
   * Headers the answer must carry: `retry-after` (seconds) when the error
   * has a numeric `retryAfterSeconds` field (quotas, rate limits, capacity).
   */
  readonly headers: Readonly<Record<string, string>>;
}

/** The HTTP status of a category. */
export function httpStatusOf(category: ErrorCategory): number {
  return HTTP_STATUS_BY_CATEGORY[category];
}

/**
 * Maps anything thrown to an HTTP status and body. Errors that are not
 * {@link AenvError}s are internal: their message is not shown to clients
 * (it may carry host paths); log the original before answering.
 */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof AenvError) {
    const status =
      (ERROR_CODES[err.code] as { httpStatus?: number }).httpStatus ?? httpStatusOf(err.category);
    const retry = err.fields.retryAfterSeconds;
    const headers: Record<string, string> =
      typeof retry === 'number' && Number.isFinite(retry) && retry >= 0
        ? { 'retry-after': String(Math.ceil(retry)) }
        : {};
    return { status, body: { code: status, message: err.message, error_code: err.code }, headers };
  }
  return {
    status: 500,
    body: { code: 500, message: 'internal error', error_code: 'INTERNAL' },
    headers: {},
  };
}
