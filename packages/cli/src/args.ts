/**
 * Parses a command's words against its {@link CommandSpec}: Node's
 * `parseArgs` in strict mode (unknown options are usage errors), fixed
 * choices checked, and for commands that run something (`exec`) the words
 * after `--` kept apart, untouched.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { UsageError } from './cli-error.js';
import { optionsOf, type CommandSpec, type ParsedArgs } from './command-spec.js';

type ParseArgsOptions = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

/** Parses `argv` (the words after the command's name). @throws {UsageError} */
export function parseCommandArgs(spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const dashes = spec.rest === true ? argv.indexOf('--') : -1;
  const words = dashes === -1 ? argv : argv.slice(0, dashes);
  const rest = dashes === -1 ? [] : argv.slice(dashes + 1);
  const options: ParseArgsOptions = {};
  for (const o of optionsOf(spec)) {
    options[o.name] = {
      type: o.type,
      ...(o.short === undefined ? {} : { short: o.short }),
      ...(o.multiple === true ? { multiple: true } : {}),
    };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...words], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional.*$/s, ''));
  }
  for (const o of optionsOf(spec)) {
    const v = parsed.values[o.name];
    if (o.choices === undefined || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) {
      if (typeof one === 'string' && !o.choices.includes(one)) {
        throw new UsageError(`--${o.name} must be one of ${o.choices.join(', ')} (got '${one}')`);
      }
    }
  }
  return { values: parsed.values as ParsedArgs['values'], positionals: parsed.positionals, rest };
}

/** A string option's value. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const v = args.values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A repeatable option's values. */
export function listOption(args: ParsedArgs, name: string): string[] {
  const v = args.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** Whether a boolean option is set. */
export function flag(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

/** `K=V` words as a map. @throws {UsageError} naming the option */
export function keyValues(words: readonly string[], option: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new UsageError(`--${option} expects KEY=VALUE (got '${w}')`);
    out[w.slice(0, eq)] = w.slice(eq + 1);
  }
  return out;
}

/**
 * Exactly `count` positionals (or at least `count` when `atLeast`).
 * @throws {UsageError} naming what is expected
 */
export function expectOperands(
  args: ParsedArgs,
  names: readonly string[],
  atLeast = false,
): string[] {
  const got = args.positionals;
  const ok = atLeast ? got.length >= names.length : got.length === names.length;
  if (!ok) {
    const what = names.join(' ') + (atLeast ? ' ...' : '');
    throw new UsageError(
      got.length < names.length ? `expected ${what}` : `unexpected '${got[names.length] ?? ''}'`,
    );
  }
  return [...got];
}
