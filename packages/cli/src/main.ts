#!/usr/bin/env node
/**
 * The `aenv` command's entry point: picks the subcommand and reports
 * failures as one line with a stable code.
 *
 * @module
 */
import { reportError, UsageError } from './cli-error.js';
import { debugCommand } from './commands/debug.js';
import { serverCommand } from './commands/server.js';

const USAGE = `Usage: aenv <command> [options]

Commands:
  server     Run a node: the API on 127.0.0.1:8000 and its sandboxes.
  debug      Look inside a node's state (aenv debug layer inspect <digest>).

Run 'aenv <command> --help' for a command's options.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    case 'server':
      return serverCommand(rest);
    case 'debug':
      return debugCommand(rest);
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = reportError(err, (s) => process.stderr.write(s));
  },
);
