/**
 * The one error base class of aenv.
 *
 * Every failure that crosses a package boundary is an {@link AenvError}: a
 * stable string `code` from the registry, the `category` that code belongs
 * to, structured `fields` (ids, paths, states) for logs and clients, and the
 * original `cause`, never stringified away.
 *
 * @module
 */
import { inspect } from 'node:util';
import { categoryOf, type ErrorCategory, type ErrorCode } from './error-codes.js';

/** Structured context of an error: ids, paths, states. JSON-safe values only. */
export type ErrorFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** Options accepted by {@link AenvError}'s constructor. */
export interface AenvErrorOptions {
  /** The error this one wraps. */
  readonly cause?: unknown;
  /** Structured context, e.g. `{ sandboxId }`. */
  readonly fields?: ErrorFields;
}

const BRAND = Symbol.for('aenv.error');

/**
 * An error with a stable code and a category.
 *
 * `instanceof AenvError` works across duplicate copies of this package (a
 * `Symbol.for` brand); subclasses use ordinary prototype checks.
 */
export class AenvError extends Error {
  /** The stable code, e.g. `SBX_NOT_FOUND`. */
  readonly code: ErrorCode;
  /** The category of {@link code}, which decides the HTTP status. */
  readonly category: ErrorCategory;
  /** Structured context. */
  readonly fields: ErrorFields;

  constructor(code: ErrorCode, message: string, options: AenvErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.category = categoryOf(code);
    this.fields = Object.freeze({ ...options.fields });
    Object.defineProperty(this, BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== AenvError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && BRAND in value;
  }

  /** A JSON-safe view for logs: code, category, message, fields and the cause chain. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      category: this.category,
      message: this.message,
      fields: this.fields,
      cause: describeCause(this.cause),
    };
  }
}

function describeCause(cause: unknown): unknown {
  if (cause === undefined) return undefined;
  if (cause instanceof AenvError) return cause.toJSON();
  if (cause instanceof Error) return { name: cause.name, message: cause.message };
  return inspect(cause, { depth: 2, breakLength: Infinity });
}

/** Wraps anything thrown into an {@link AenvError}, keeping AenvErrors as they are. */
export function toAenvError(
  err: unknown,
  code: ErrorCode = 'INTERNAL',
  context?: string,
): AenvError {
  if (err instanceof AenvError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new AenvError(code, context === undefined ? detail : `${context}: ${detail}`, {
    cause: err,
  });
}
