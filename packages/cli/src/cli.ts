/**
 * Runs one `aenv` command line against given streams and environment:
 * finds the command in the table, parses its options, shows help, builds
 * the SDK client from the connection settings, runs it, and turns any
 * failure into a message with a hint and an exit status. `main.ts` calls it
 * with the process's streams; tests call it in-process.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { AenvClient } from '@aenv/sdk';
import { parseCommandArgs, stringOption } from './args.js';
import type { CliContext, CliIo } from './cli-context.js';
import { reportError, UsageError } from './cli-error.js';
import type { CommandSpec, ParsedArgs } from './command-spec.js';
import { COMMANDS, lookupCommand, suggestCommands } from './command-table.js';
import { commandHelp, familyHelp, overviewHelp } from './help.js';
import {
  readSettings,
  resolveConnection,
  settingsPath,
  type Connection,
} from './settings/cli-settings.js';

/** The CLI's version (its package's). */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function contextFor(io: CliIo, spec: CommandSpec, args: ParsedArgs): CliContext {
  const path = settingsPath(io.env);
  let connection: Connection | undefined;
  const connect = (): Connection =>
    (connection ??= resolveConnection(
      { url: stringOption(args, 'url'), key: stringOption(args, 'key') },
      io.env,
      readSettings(path),
    ));
  return {
    ...io,
    command: spec.name,
    settingsPath: path,
    connection: connect,
    client: () => {
      const c = connect();
      return Promise.resolve(
        new AenvClient({
          apiUrl: c.url,
          sandboxUrl: c.sandboxUrl,
          env: {},
          ...(c.key === undefined ? {} : { apiKey: c.key }),
        }),
      );
    },
    out: (line) => void io.stdout.write(`${line}\n`),
    err: (line) => void io.stderr.write(`${line}\n`),
  };
}

function unknownCommand(word: string): UsageError {
  const close = suggestCommands(word);
  const hint =
    close.length === 0 ? '' : ` (did you mean ${close.map((c) => `'${c}'`).join(' or ')}?)`;
  return new UsageError(`unknown command '${word}'${hint}`);
}

async function runSpec(io: CliIo, spec: CommandSpec, rest: readonly string[]): Promise<number> {
  let url: string | undefined;
  try {
    if (spec.raw !== undefined) {
      return await spec.raw(rest, contextFor(io, spec, { values: {}, positionals: [], rest: [] }));
    }
    const args = parseCommandArgs(spec, rest);
    if (args.values.help === true) {
      io.stdout.write(commandHelp(spec));
      return 0;
    }
    const ctx = contextFor(io, spec, args);
    if (spec.remote !== false) url = stringOption(args, 'url');
    if (spec.run === undefined) throw new UsageError(`'${spec.name}' cannot run`);
    return await spec.run(ctx, args);
  } catch (err) {
    return reportError(err, (s) => void io.stderr.write(s), {
      command: spec.name,
      ...(url === undefined ? {} : { url }),
    });
  }
}

/** Runs one command line; resolves with the exit status. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    io.stdout.write(overviewHelp(COMMANDS));
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === '-v' || first === 'version') {
    io.stdout.write(`aenv ${cliVersion()}\n`);
    return 0;
  }
  const found = lookupCommand(argv);
  if (found.kind === 'command') return runSpec(io, found.spec, found.rest);
  if (found.kind === 'group') {
    const next = argv[found.word.split(' ').length];
    const asked = next === '-h' || next === '--help';
    if (next !== undefined && !asked) {
      return reportError(
        new UsageError(`unknown command '${found.word} ${next}'`),
        (s) => void io.stderr.write(s),
        { command: found.word },
      );
    }
    io.stdout.write(familyHelp(found.word, found.specs));
    return asked ? 0 : 2;
  }
  return reportError(unknownCommand(first), (s) => void io.stderr.write(s));
}
