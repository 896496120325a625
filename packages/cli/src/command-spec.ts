/**
 * How a command is described: its name, options, help text and examples,
 * and the function that runs it. One table of these (`command-table.ts`)
 * drives parsing, `--help`, shell completions and dispatch, so the three
 * never disagree.
 *
 * @module
 */
import type { CliContext } from './cli-context.js';

/** One option of a command. */
export interface OptionSpec {
  /** Long name, without dashes. */
  readonly name: string;
  readonly short?: string;
  readonly type: 'boolean' | 'string';
  /** May be given more than once (values collected in order). */
  readonly multiple?: boolean;
  /** The value's placeholder in help (`N`, `DURATION`). */
  readonly value?: string;
  readonly help: string;
  /** Fixed choices, offered by completions and checked by the parser. */
  readonly choices?: readonly string[];
}

/** Parsed command line of one command. */
export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  readonly positionals: readonly string[];
  /** Words after `--` (only for commands with `rest`). */
  readonly rest: readonly string[];
}

/** A command of the `aenv` CLI. */
export interface CommandSpec {
  /** `ls`, or a two-word `template ls`. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Where `aenv --help` lists it. @default 'sandboxes' */
  readonly group?: 'sandboxes' | 'templates' | 'node' | 'other';
  /** `aenv exec [options] ID -- COMMAND [ARG...]` without the `aenv `. */
  readonly usage: string;
  /** Paragraphs shown under the usage line. */
  readonly description?: string;
  readonly options: readonly OptionSpec[];
  /** Command lines shown under "Examples", each with a `# comment` line above it allowed. */
  readonly examples: readonly string[];
  /** Positional argument kinds, for completions (`sandbox`, `file`, `template`). */
  readonly operands?: readonly ('sandbox' | 'file' | 'template' | 'snapshot')[];
  /** Takes the words after `--` as `rest`. */
  readonly rest?: boolean;
  /** Talks to a node (gets --url and --key). @default true */
  readonly remote?: boolean;
  /** Parses its own arguments (`server`, `debug`): gets the raw words. */
  readonly raw?: (argv: readonly string[], ctx: CliContext) => Promise<number>;
  run?(ctx: CliContext, args: ParsedArgs): Promise<number>;
}

/** The options every remote command takes. */
export const CONNECTION_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'url',
    type: 'string',
    value: 'URL',
    help: 'node URL (default: aenv auth, $AENV_API_URL, http://127.0.0.1:8000)',
  },
  {
    name: 'key',
    type: 'string',
    value: 'KEY',
    help: 'API key (default: aenv auth, $AENV_API_KEY, the local node key)',
  },
];

/** `-h, --help`, which every command takes. */
export const HELP_OPTION: OptionSpec = {
  name: 'help',
  short: 'h',
  type: 'boolean',
  help: 'show this help',
};

/** Every option a command accepts, common ones included. */
export function optionsOf(spec: CommandSpec): OptionSpec[] {
  return [...spec.options, ...(spec.remote === false ? [] : CONNECTION_OPTIONS), HELP_OPTION];
}
