/**
 * Typed configuration fields: each knows its default, its environment
 * variable, its documentation, and how to parse a JSON value or an
 * environment string into its type. `config-loader.ts` walks a schema of
 * these; `field` is the factory used to declare one.
 *
 * @module
 */
import { isAbsolute, resolve } from 'node:path';
import { AenvError } from './aenv-error.js';

/** Where a value came from, for error messages and path resolution. */
export interface ValueSource {
  /** Dotted key, e.g. `api.port`. */
  readonly key: string;
  /** Human-readable origin: `default`, `file /etc/aenv.json`, `env AENV_PORT`. */
  readonly origin: string;
  /** Directory that relative paths resolve against. */
  readonly baseDir: string;
}

/** What every field declaration takes. */
export interface FieldSpec<T> {
  /** The value when neither the file nor the environment sets one. */
  readonly default: T;
  /** The environment variable that overrides the file, if any. */
  readonly env?: string;
  /** One sentence for docs and `--help`. */
  readonly doc: string;
}

/** A configuration field of type `T`. */
export class ConfigField<T> {
  constructor(
    readonly spec: FieldSpec<T>,
    readonly typeName: string,
    readonly fromJson: (value: unknown, at: ValueSource) => T,
    readonly fromEnv: (value: string, at: ValueSource) => T,
  ) {}
}

function invalid(at: ValueSource, expected: string, got: unknown): AenvError {
  const shown = typeof got === 'string' ? JSON.stringify(got) : String(JSON.stringify(got));
  return new AenvError(
    'CONFIG_INVALID_VALUE',
    `config key '${at.key}' (${at.origin}): expected ${expected}, got ${shown}`,
    { fields: { key: at.key, origin: at.origin } },
  );
}

function expectString(value: unknown, at: ValueSource, expected = 'a string'): string {
  if (typeof value !== 'string') throw invalid(at, expected, value);
  return value;
}

function parseInteger(value: unknown, at: ValueSource, min: number, max: number): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  const expected = `an integer in [${min}, ${max}]`;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw invalid(at, expected, value);
  }
  return n;
}

function parseBoolean(value: unknown, at: ValueSource): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
  }
  throw invalid(at, 'a boolean (true/false, 1/0, yes/no, on/off)', value);
}

function resolvePath(value: unknown, at: ValueSource): string {
  const p = expectString(value, at, 'a path');
  if (p === '') throw invalid(at, 'a non-empty path', value);
  return isAbsolute(p) ? resolve(p) : resolve(at.baseDir, p);
}

function parseList(value: unknown, at: ValueSource): readonly string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return [...value];
  throw invalid(at, 'an array of strings', value);
}

function splitList(value: string): readonly string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Factories for configuration fields. */
export const field = {
  /** A string. */
  string(spec: FieldSpec<string>): ConfigField<string> {
    const parse = (v: unknown, at: ValueSource): string => expectString(v, at);
    return new ConfigField(spec, 'string', parse, parse);
  },
  /** A string that may be absent (`undefined`). */
  optionalString(spec: FieldSpec<string | undefined>): ConfigField<string | undefined> {
    const parse = (v: unknown, at: ValueSource): string => expectString(v, at);
    return new ConfigField(spec, 'string', parse, parse);
  },
  /** An integer within `[min, max]` (defaults: 0 and `Number.MAX_SAFE_INTEGER`). */
  integer(spec: FieldSpec<number> & { min?: number; max?: number }): ConfigField<number> {
    const min = spec.min ?? 0;
    const max = spec.max ?? Number.MAX_SAFE_INTEGER;
    const parse = (v: unknown, at: ValueSource): number => parseInteger(v, at, min, max);
    return new ConfigField(spec, `integer [${min}, ${max}]`, parse, parse);
  },
  /** A boolean; the environment accepts true/false, 1/0, yes/no, on/off. */
  boolean(spec: FieldSpec<boolean>): ConfigField<boolean> {
    return new ConfigField(spec, 'boolean', parseBoolean, parseBoolean);
  },
  /** A filesystem path, made absolute: relative to the config file's directory or the cwd. */
  path(spec: FieldSpec<string>): ConfigField<string> {
    return new ConfigField(spec, 'path', resolvePath, resolvePath);
  },
  /** A path that may be absent. */
  optionalPath(spec: FieldSpec<string | undefined>): ConfigField<string | undefined> {
    return new ConfigField(spec, 'path', resolvePath, resolvePath);
  },
  /** One of a fixed set of strings. */
  oneOf<const V extends string>(values: readonly V[], spec: FieldSpec<NoInfer<V>>): ConfigField<V> {
    const expected = `one of ${values.map((v) => `'${v}'`).join(', ')}`;
    const parse = (v: unknown, at: ValueSource): V => {
      if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as V;
      throw invalid(at, expected, v);
    };
    return new ConfigField(spec, expected, parse, parse);
  },
  /** A list of strings; the environment form is comma-separated. */
  list(spec: FieldSpec<readonly string[]>): ConfigField<readonly string[]> {
    return new ConfigField(spec, 'list of strings', parseList, splitList);
  },
};
