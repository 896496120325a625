/**
 * The SDK's typed errors.
 *
 * Every error the SDK throws is an {@link AenvSdkError} with a stable
 * `code`: the node's `error_code` when the node answered (`SBX_NOT_FOUND`,
 * see docs/errors.md), or one of the SDK's own `SDK_*` codes for what
 * happens on the client side (the node is unreachable, a command exited
 * non-zero). The classes follow the node's error categories; a few
 * specific classes (`SandboxNotFoundError`, ...) extend them.
 *
 * `instanceof` works across duplicate copies of this package (two versions
 * in one `node_modules` tree, a bundled copy beside an installed one): each
 * instance carries the names of its class chain under a `Symbol.for` key and
 * every class checks that list instead of the prototype chain.
 *
 * @module
 */

/** Property key (shared by every copy of the SDK) listing an instance's class names. */
const BRANDS = Symbol.for('@aenv/sdk/error-brands');

/** A class of this module, as seen by the brand check. */
interface BrandedClass {
  readonly brand: string;
}

function brandsOf(target: unknown): string[] {
  const brands: string[] = [];
  let cls: unknown = target;
  while (typeof cls === 'function' && Object.hasOwn(cls, 'brand')) {
    brands.push((cls as unknown as BrandedClass).brand);
    cls = Object.getPrototypeOf(cls);
  }
  return brands;
}

/** What every error constructor accepts besides the message. */
export interface AenvSdkErrorOptions {
  /** The stable code; defaults to the class's own. */
  readonly code?: string;
  /** The HTTP status of the answer this error came from. */
  readonly status?: number;
  readonly cause?: unknown;
}

/** The base of every error the SDK throws. */
export class AenvSdkError extends Error {
  /** The class name, stable across copies and minifiers. */
  static readonly brand: string = 'AenvSdkError';
  /** The code used when none is given. */
  static readonly defaultCode: string = 'INTERNAL';
  /** The node's `error_code`, or an `SDK_*` code for client-side failures. */
  readonly code: string;
  /** The HTTP status of the answer, when there was one. */
  readonly status: number | undefined;

  constructor(message: string, options: AenvSdkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const cls = new.target as unknown as BrandedClass & { defaultCode: string };
    this.name = cls.brand;
    this.code = options.code ?? cls.defaultCode;
    this.status = options.status;
    Object.defineProperty(this, BRANDS, { value: brandsOf(new.target), enumerable: false });
  }

  /** `instanceof` by brand, so it holds across copies of the SDK. */
  static override [Symbol.hasInstance]<T>(
    this: abstract new (...args: never[]) => T,
    value: unknown,
  ): value is T {
    if (typeof value !== 'object' || value === null) return false;
    const brands = (value as Record<symbol, unknown>)[BRANDS];
    const brand = (this as unknown as BrandedClass).brand;
    return Array.isArray(brands) && brands.includes(brand);
  }
}

/** The request or an argument is malformed (HTTP 400). */
export class InvalidArgumentError extends AenvSdkError {
  static override readonly brand: string = 'InvalidArgumentError';
  static override readonly defaultCode: string = 'INVALID_ARGUMENT';
}

/** No API key, or a wrong one (HTTP 401); also a wrong envd access token. */
export class AuthenticationError extends AenvSdkError {
  static override readonly brand: string = 'AuthenticationError';
  static override readonly defaultCode: string = 'API_UNAUTHENTICATED';
}

/** The key is valid but may not do this (HTTP 403). */
export class PermissionDeniedError extends AenvSdkError {
  static override readonly brand: string = 'PermissionDeniedError';
  static override readonly defaultCode: string = 'PERMISSION_DENIED';
}

/** The named thing does not exist (HTTP 404). */
export class NotFoundError extends AenvSdkError {
  static override readonly brand: string = 'NotFoundError';
  static override readonly defaultCode: string = 'NOT_FOUND';
}

/** No such sandbox, or it is no longer running (`SBX_NOT_FOUND`; the proxy's 502). */
export class SandboxNotFoundError extends NotFoundError {
  static override readonly brand: string = 'SandboxNotFoundError';
  static override readonly defaultCode: string = 'SBX_NOT_FOUND';
}

/** No such template (`TEMPLATE_NOT_FOUND`). */
export class TemplateNotFoundError extends NotFoundError {
  static override readonly brand: string = 'TemplateNotFoundError';
  static override readonly defaultCode: string = 'TEMPLATE_NOT_FOUND';
}

/** No such snapshot (`SNAPSHOT_NOT_FOUND`). */
export class SnapshotNotFoundError extends NotFoundError {
  static override readonly brand: string = 'SnapshotNotFoundError';
  static override readonly defaultCode: string = 'SNAPSHOT_NOT_FOUND';
}

/** No such file or directory inside a sandbox (`ENVD_PATH_NOT_FOUND`). */
export class FileNotFoundError extends NotFoundError {
  static override readonly brand: string = 'FileNotFoundError';
  static override readonly defaultCode: string = 'ENVD_PATH_NOT_FOUND';
}

/**
 * HTTP 409: the node's categories AlreadyExists, FailedPrecondition and
 * Conflict share this status; `code` tells which condition it was.
 */
export class ConflictError extends AenvSdkError {
  static override readonly brand: string = 'ConflictError';
  static override readonly defaultCode: string = 'CONFLICT';
}

/** Something with that name or path exists already. */
export class AlreadyExistsError extends ConflictError {
  static override readonly brand: string = 'AlreadyExistsError';
  static override readonly defaultCode: string = 'ALREADY_EXISTS';
}

/** The sandbox's state does not allow the operation (`SBX_INVALID_STATE`: pause a paused one). */
export class InvalidStateError extends ConflictError {
  static override readonly brand: string = 'InvalidStateError';
  static override readonly defaultCode: string = 'SBX_INVALID_STATE';
}

/** A quota or capacity limit was reached (HTTP 429); retry later. */
export class ResourceExhaustedError extends AenvSdkError {
  static override readonly brand: string = 'ResourceExhaustedError';
  static override readonly defaultCode: string = 'RESOURCE_EXHAUSTED';
}

/** A bug or an unexpected failure on the node (HTTP 500); its logs have the details. */
export class InternalError extends AenvSdkError {
  static override readonly brand: string = 'InternalError';
  static override readonly defaultCode: string = 'INTERNAL';
}

/**
 * The node cannot do this (HTTP 501), or does not have the route at all
 * (`API_ROUTE_NOT_FOUND`: a feature that this node's version lacks).
 */
export class NotSupportedError extends AenvSdkError {
  static override readonly brand: string = 'NotSupportedError';
  static override readonly defaultCode: string = 'NOT_SUPPORTED';
}

/** The node or a dependency is unavailable, or shutting down (HTTP 503); retry. */
export class UnavailableError extends AenvSdkError {
  static override readonly brand: string = 'UnavailableError';
  static override readonly defaultCode: string = 'UNAVAILABLE';
}

/** The node could not be reached at all (`SDK_CONNECTION_FAILED`: refused, DNS, TLS). */
export class ConnectionError extends UnavailableError {
  static override readonly brand: string = 'ConnectionError';
  static override readonly defaultCode: string = 'SDK_CONNECTION_FAILED';
}

/** A deadline passed (`SDK_TIMEOUT`): a request, or a command's `timeoutMs`. */
export class TimeoutError extends AenvSdkError {
  static override readonly brand: string = 'TimeoutError';
  static override readonly defaultCode: string = 'SDK_TIMEOUT';
}

/** What a finished command produced. */
export interface CommandResult {
  /** The exit code (-1 when a signal ended it). */
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  /** envd's description of a failure (`exit status 3`, `signal: killed`). */
  readonly error?: string | undefined;
}

/** A command exited with a non-zero code (`SDK_COMMAND_EXIT`); carries its result. */
export class CommandExitError extends AenvSdkError implements CommandResult {
  static override readonly brand: string = 'CommandExitError';
  static override readonly defaultCode: string = 'SDK_COMMAND_EXIT';
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly error: string | undefined;

  constructor(result: CommandResult) {
    super(`command exited with code ${result.exitCode}${errorSuffix(result)}`);
    this.exitCode = result.exitCode;
    this.stdout = result.stdout;
    this.stderr = result.stderr;
    this.error = result.error;
  }
}

function errorSuffix(result: CommandResult): string {
  return result.error === undefined || result.error === '' ? '' : ` (${result.error})`;
}
