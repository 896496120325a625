/**
 * How the CLI reports failures: one line `aenv: <message> (<code>)` on
 * stderr and a non-zero exit status. Usage errors exit 2, others 1.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** A wrong command line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Prints an error the way the CLI does and returns the exit status. */
export function reportError(err: unknown, write: (s: string) => void): number {
  if (err instanceof UsageError) {
    write(`aenv: ${err.message}\nRun 'aenv --help' for usage.\n`);
    return 2;
  }
  if (err instanceof AenvError) {
    write(`aenv: ${err.message} (${err.code})\n`);
    return 1;
  }
  write(`aenv: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 1;
}
