/**
 * `@aenv/cli`: the `aenv` command. The entry point is `main.ts`; this
 * module exports the pieces other tools and tests reuse.
 *
 * @module
 */
export { runCli, cliVersion } from './cli.js';
export type { CliIo, CliContext, InStream, OutStream } from './cli-context.js';
export { CliError, reportError, UsageError } from './cli-error.js';
export { COMMANDS, lookupCommand } from './command-table.js';
export type { CommandSpec, OptionSpec, ParsedArgs } from './command-spec.js';
export { bashCompletion, zshCompletion } from './completion-script.js';
export { progressPrinter } from './progress-printer.js';
export { progressBar } from './output/progress-bar.js';
export { formatTable } from './output/table.js';
export {
  readSettings,
  resolveConnection,
  settingsPath,
  writeSettings,
  type Connection,
  type StoredSettings,
} from './settings/cli-settings.js';
