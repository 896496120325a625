/**
 * How envd's failures become wire errors.
 *
 * Handlers throw {@link AenvError}s with `ENVD_*` codes. Connect RPCs answer
 * with the Connect code of the error's category; the plain HTTP routes answer
 * `{code, message}` JSON with the category's HTTP status, except where E2B's
 * envd uses a status of its own (507 for a full disk, 406 for an unusable
 * `Accept-Encoding`), because the SDKs map those statuses to specific errors.
 *
 * @module
 */
import { AenvError, httpStatusOf, type ErrorCategory, type ErrorCode } from '@aenv/shared';
import { Code, ConnectError } from '@connectrpc/connect';

const CONNECT_CODE_BY_CATEGORY: Readonly<Record<ErrorCategory, Code>> = {
  NotFound: Code.NotFound,
  AlreadyExists: Code.AlreadyExists,
  InvalidArgument: Code.InvalidArgument,
  FailedPrecondition: Code.FailedPrecondition,
  Conflict: Code.Aborted,
  ResourceExhausted: Code.ResourceExhausted,
  Unavailable: Code.Unavailable,
  NotSupported: Code.Unimplemented,
  Unauthenticated: Code.Unauthenticated,
  PermissionDenied: Code.PermissionDenied,
  Internal: Code.Internal,
};

/** HTTP statuses that differ from the category's, as E2B's envd answers them. */
const HTTP_STATUS_OVERRIDES: Partial<Record<ErrorCode, number>> = {
  ENVD_NO_SPACE: 507,
  ENVD_ENCODING_UNSUPPORTED: 406,
};

/** Converts anything thrown by a handler into a ConnectError for the wire. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof AenvError) {
    return new ConnectError(
      err.message,
      CONNECT_CODE_BY_CATEGORY[err.category],
      undefined,
      undefined,
      err,
    );
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new ConnectError(detail, Code.Internal, undefined, undefined, err);
}

/** The HTTP status and JSON body for a failure of a plain HTTP route. */
export function toEnvdHttpError(err: unknown): {
  status: number;
  body: { code: number; message: string };
} {
  if (err instanceof AenvError) {
    const status = HTTP_STATUS_OVERRIDES[err.code] ?? httpStatusOf(err.category);
    return { status, body: { code: status, message: err.message } };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, body: { code: 500, message } };
}

/** `err` itself when it is an Error, else an Error describing it. */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** The errno-style code of a Node.js system error, if any. */
export function errnoOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const FS_CODE_BY_ERRNO: Readonly<Record<string, ErrorCode>> = {
  ENOENT: 'ENVD_PATH_NOT_FOUND',
  ENOTDIR: 'ENVD_NOT_A_DIRECTORY',
  EISDIR: 'ENVD_IS_A_DIRECTORY',
  EEXIST: 'ENVD_ALREADY_EXISTS',
  EACCES: 'ENVD_PERMISSION_DENIED',
  EPERM: 'ENVD_PERMISSION_DENIED',
  ENOSPC: 'ENVD_NO_SPACE',
  EDQUOT: 'ENVD_NO_SPACE',
  ELOOP: 'ENVD_PATH_INVALID',
  ENAMETOOLONG: 'ENVD_PATH_INVALID',
};

/**
 * Wraps a filesystem error with the envd code its errno stands for.
 * `action` says what failed ("stat", "remove", ...), for the message.
 */
export function fsError(err: unknown, action: string, path: string): AenvError {
  if (err instanceof AenvError) return err;
  const errno = errnoOf(err) ?? '';
  const code = FS_CODE_BY_ERRNO[errno] ?? 'INTERNAL';
  const detail = err instanceof Error ? err.message : String(err);
  const message =
    code === 'ENVD_PATH_NOT_FOUND'
      ? `path '${path}' does not exist`
      : code === 'ENVD_NO_SPACE'
        ? `not enough disk space available: ${action} '${path}'`
        : `${action} '${path}' failed: ${detail}`;
  return new AenvError(code, message, { cause: err, fields: { path, errno } });
}
