/**
 * Lists as the CLI prints them: an aligned table on a terminal, JSON when
 * the output is piped (or with `--output json`), bare ids with `-q`.
 *
 * @module
 */
import type { CliContext } from '../cli-context.js';

/** One column: its header and how to render a row's cell. */
export interface Column<T> {
  readonly header: string;
  readonly cell: (row: T) => string;
}

/** Aligns cells in columns separated by three spaces; no trailing spaces. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].map((l) => `${l}\n`).join('');
}

/** How to print a list: `table`, `json`, or `ids`. */
export type ListFormat = 'table' | 'json' | 'ids';

/** The format the user asked for, else table on a terminal and JSON on a pipe. */
export function listFormat(
  ctx: CliContext,
  output: string | undefined,
  quiet: boolean,
): ListFormat {
  if (quiet) return 'ids';
  if (output === 'json' || output === 'table') return output;
  return ctx.stdout.isTTY === true ? 'table' : 'json';
}

/** The `--output` and `-q` options of list commands. */
export const LIST_OPTIONS = [
  {
    name: 'output',
    short: 'o',
    type: 'string',
    value: 'FORMAT',
    choices: ['table', 'json'],
    help: 'table or json (default: table on a terminal, json when piped)',
  },
  { name: 'quiet', short: 'q', type: 'boolean', help: 'print only the ids' },
] as const;

/** Prints a list in the chosen format. */
export function printList<T>(
  ctx: CliContext,
  items: readonly T[],
  how: {
    format: ListFormat;
    columns: readonly Column<T>[];
    id: (item: T) => string;
    json?: (item: T) => unknown;
  },
): void {
  if (how.format === 'ids') {
    for (const item of items) ctx.out(how.id(item));
  } else if (how.format === 'json') {
    ctx.out(JSON.stringify(items.map(how.json ?? ((i) => i)), null, 2));
  } else {
    ctx.stdout.write(
      formatTable(
        how.columns.map((c) => c.header),
        items.map((i) => how.columns.map((c) => c.cell(i))),
      ),
    );
  }
}
