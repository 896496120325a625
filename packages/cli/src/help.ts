/**
 * `--help` texts, generated from the command table: the overview of every
 * command, a family's (`aenv snapshot`), and one command's usage, options
 * and examples.
 *
 * @module
 */
import { optionsOf, type CommandSpec, type OptionSpec } from './command-spec.js';

const GROUPS = [
  ['sandboxes', 'Sandboxes'],
  ['templates', 'Templates and snapshots'],
  ['node', 'Nodes and access'],
  ['other', 'Other'],
] as const;

function optionLabel(o: OptionSpec): string {
  const long = `--${o.name}${o.value === undefined ? '' : ` ${o.value}`}`;
  return o.short === undefined ? `    ${long}` : `-${o.short}, ${long}`;
}

function columns(rows: readonly (readonly [string, string])[], indent = 2): string {
  const width = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `${' '.repeat(indent)}${a.padEnd(width)}   ${b}\n`).join('');
}

/** The help of one command. */
export function commandHelp(spec: CommandSpec): string {
  let text = `Usage: aenv ${spec.usage}\n\n${spec.summary}\n`;
  if (spec.description !== undefined) text += `\n${wrap(spec.description, 78)}\n`;
  text += `\nOptions:\n${columns(optionsOf(spec).map((o) => [optionLabel(o), o.help]))}`;
  if (spec.examples.length > 0) {
    text += `\nExamples:\n${spec.examples.map((e) => `  ${e}\n`).join('')}`;
  }
  return text;
}

/** The help of a command family (`aenv snapshot`). */
export function familyHelp(word: string, specs: readonly CommandSpec[]): string {
  return (
    `Usage: aenv ${word} <command> [options]\n\nCommands:\n` +
    columns(specs.map((s) => [s.name.slice(word.length + 1), s.summary])) +
    `\nRun 'aenv ${word} <command> --help' for a command's options and examples.\n`
  );
}

/** `aenv --help`. */
export function overviewHelp(specs: readonly CommandSpec[]): string {
  let text =
    'Usage: aenv <command> [options]\n\n' +
    'aenv runs isolated microVM sandboxes for AI agents. These commands talk to a node\n' +
    "('aenv server'; default http://127.0.0.1:8000, or 'aenv auth login --url URL').\n";
  for (const [group, title] of GROUPS) {
    const inGroup = specs.filter((s) => (s.group ?? 'sandboxes') === group);
    text += `\n${title}:\n${columns(inGroup.map((s) => [s.name, s.summary]))}`;
  }
  return (
    text +
    '\nExamples:\n' +
    '  aenv start                                   # a shell in a new sandbox\n' +
    '  ID=$(aenv start --detach)                    # a sandbox in the background\n' +
    '  aenv exec $ID -- python3 -c "print(6*7)"\n' +
    '  aenv cp ./src $ID:/home/user/src\n' +
    '  aenv pause $ID && aenv resume $ID\n' +
    '  aenv rm $ID\n' +
    "\nRun 'aenv <command> --help' for a command's options and examples.\n"
  );
}

/** Wraps a paragraph at `width` columns. */
export function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}
