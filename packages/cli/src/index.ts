/**
 * `@aenv/cli`: the `aenv` command. The entry point is `main.ts`; this
 * module exports the pieces other tools reuse.
 *
 * @module
 */
export { reportError, UsageError } from './cli-error.js';
export { progressPrinter } from './progress-printer.js';
