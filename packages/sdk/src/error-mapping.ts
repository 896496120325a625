/**
 * Turns error answers into the SDK's typed errors.
 *
 * Two wire shapes arrive here:
 * - the node's (and envd's plain HTTP routes') JSON body
 *   `{code: <http status>, message, error_code?}`: the class comes from
 *   `error_code` when it has a specific class, else from the HTTP status
 *   (one generic class per status, as each node error category has exactly
 *   one status);
 * - a Connect error `{code: "not_found", message}` from envd's RPCs: the
 *   class comes from the Connect code.
 *
 * A node that lacks a route answers `API_ROUTE_NOT_FOUND`; the SDK turns
 * that into {@link NotSupportedError} naming the feature, because the only
 * way an SDK method reaches a missing route is a node older than the SDK.
 *
 * @module
 */
import {
  AenvSdkError,
  AlreadyExistsError,
  AuthenticationError,
  ConflictError,
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
} from './errors.js';

/** A constructor of one of the SDK's error classes. */
export type ErrorClass = new (message: string, options?: AenvSdkErrorOptions) => AenvSdkError;

/** Node error codes with a class of their own; every other code gets its status's class. */
export const ERROR_CLASS_BY_CODE: Readonly<Record<string, ErrorClass>> = Object.freeze({
  API_ROUTE_NOT_FOUND: NotSupportedError,
  ENVD_ALREADY_EXISTS: AlreadyExistsError,
  ENVD_PATH_NOT_FOUND: FileNotFoundError,
  SBX_INVALID_STATE: InvalidStateError,
  SBX_NOT_FOUND: SandboxNotFoundError,
  SNAPSHOT_NOT_FOUND: SnapshotNotFoundError,
  TEMPLATE_NOT_FOUND: TemplateNotFoundError,
});

/** The generic class of each HTTP status the node answers with. */
export const ERROR_CLASS_BY_STATUS: Readonly<Record<number, ErrorClass>> = Object.freeze({
  400: InvalidArgumentError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  429: ResourceExhaustedError,
  500: InternalError,
  501: NotSupportedError,
  503: UnavailableError,
  504: TimeoutError,
  // envd: a full disk
  507: ResourceExhaustedError,
});

/** The class for an answer: by `error_code` first, then by status. */
export function errorClassFor(errorCode: string | undefined, status: number): ErrorClass {
  const specific = errorCode === undefined ? undefined : ERROR_CLASS_BY_CODE[errorCode];
  if (specific !== undefined) return specific;
  return ERROR_CLASS_BY_STATUS[status] ?? (status >= 500 ? UnavailableError : AenvSdkError);
}

/** What the caller was doing, for messages. */
export interface ErrorContext {
  /** The feature an SDK method uses, for "not supported yet" ("snapshots"). */
  readonly feature?: string;
  /** The class for a 404 without a specific code (files: `FileNotFoundError`). */
  readonly notFound?: ErrorClass;
}

interface WireBody {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly error_code?: unknown;
}

function asBody(body: unknown): WireBody {
  return typeof body === 'object' && body !== null ? body : {};
}

/**
 * The typed error for a non-2xx answer. `body` is the parsed JSON (or the
 * raw text, or undefined when there was none).
 */
export function errorFromAnswer(
  status: number,
  body: unknown,
  context: ErrorContext = {},
): AenvSdkError {
  const wire = asBody(body);
  if (typeof wire.code === 'string') {
    return errorFromConnect(wire.code, messageOf(wire, status, body), context, status);
  }
  const errorCode = typeof wire.error_code === 'string' ? wire.error_code : undefined;
  const message = messageOf(wire, status, body);
  if (errorCode === 'API_ROUTE_NOT_FOUND') {
    const what = context.feature ?? 'this operation';
    return new NotSupportedError(
      `this node does not support ${what} yet (${message}); upgrade the node`,
      { code: errorCode, status },
    );
  }
  let cls = errorClassFor(errorCode, status);
  if (status === 404 && errorCode === undefined && context.notFound !== undefined) {
    cls = context.notFound;
  }
  if (status === 502 && errorCode === undefined) cls = SandboxNotFoundError;
  return new cls(message, { status, ...(errorCode === undefined ? {} : { code: errorCode }) });
}

function messageOf(wire: WireBody, status: number, body: unknown): string {
  if (typeof wire.message === 'string' && wire.message !== '') return wire.message;
  if (typeof body === 'string' && body.trim() !== '') return body.trim().slice(0, 500);
  return `the node answered HTTP ${status}`;
}

/** Connect error codes and the SDK classes they become. */
const CLASS_BY_CONNECT_CODE: Readonly<Record<string, ErrorClass>> = {
  canceled: AenvSdkError,
  unknown: InternalError,
  invalid_argument: InvalidArgumentError,
  deadline_exceeded: TimeoutError,
  not_found: NotFoundError,
  already_exists: AlreadyExistsError,
  permission_denied: PermissionDeniedError,
  resource_exhausted: ResourceExhaustedError,
  failed_precondition: ConflictError,
  aborted: ConflictError,
  out_of_range: InvalidArgumentError,
  unimplemented: NotSupportedError,
  internal: InternalError,
  unavailable: UnavailableError,
  data_loss: InternalError,
  unauthenticated: AuthenticationError,
};

/** The typed error for a Connect error (`{code: "not_found", message}`) from envd. */
export function errorFromConnect(
  connectCode: string,
  message: string,
  context: ErrorContext = {},
  status?: number,
): AenvSdkError {
  let cls = CLASS_BY_CONNECT_CODE[connectCode] ?? InternalError;
  if (connectCode === 'not_found' && context.notFound !== undefined) cls = context.notFound;
  const options = status === undefined ? {} : { status };
  if (connectCode === 'canceled') return new cls(message, { ...options, code: 'SDK_CANCELED' });
  return new cls(message, options);
}
