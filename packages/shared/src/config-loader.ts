/**
 * The typed configuration loader.
 *
 * A schema is a tree of plain objects (sections) whose leaves are
 * {@link ConfigField}s. `loadConfig` layers, per field: the declared
 * default, then the JSON config file, then the field's environment
 * variable. Unknown keys in the file are rejected with a message naming the
 * key and the keys that are known there. Paths become absolute (relative to
 * the file's directory when they come from the file, else to `cwd`). The
 * result is deeply frozen and typed from the schema.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AenvError } from './aenv-error.js';
import { ConfigField, type ValueSource } from './config-field.js';

/** A configuration schema: sections (plain objects) and fields. */
export interface ConfigSchema {
  readonly [key: string]: ConfigField<unknown> | ConfigSchema;
}

/** The loaded, frozen configuration of a schema. */
export type ResolvedConfig<S extends ConfigSchema> = {
  readonly [K in keyof S]: S[K] extends ConfigField<infer T>
    ? T
    : S[K] extends ConfigSchema
      ? ResolvedConfig<S[K]>
      : never;
};

/** Where `loadConfig` reads from. */
export interface LoadConfigOptions {
  /** A JSON config file. When given, it must exist and parse. */
  readonly file?: string;
  /** Environment variables (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Directory for relative paths from defaults and env (default `process.cwd()`). */
  readonly cwd?: string;
}

/** One documented field of a schema, for `--help` and docs. */
export interface ConfigFieldDoc {
  readonly key: string;
  readonly env: string | undefined;
  readonly type: string;
  readonly default: unknown;
  readonly doc: string;
}

interface Walk {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly file: string | undefined;
}

/**
 * Loads a configuration.
 * @throws {AenvError} `CONFIG_FILE_UNREADABLE`, `CONFIG_UNKNOWN_KEY`, `CONFIG_INVALID_VALUE`.
 */
export function loadConfig<S extends ConfigSchema>(
  schema: S,
  options: LoadConfigOptions = {},
): ResolvedConfig<S> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const file = options.file === undefined ? undefined : resolve(cwd, options.file);
  const fileValues = file === undefined ? {} : readConfigFile(file);
  const walk: Walk = { env: options.env ?? process.env, cwd, file };
  return deepFreeze(resolveSection(schema, fileValues, '', walk)) as ResolvedConfig<S>;
}

/** Lists every field of a schema with its key, env variable, type, default and doc. */
export function describeConfig(schema: ConfigSchema, prefix = ''): ConfigFieldDoc[] {
  return Object.entries(schema).flatMap(([name, node]) => {
    const key = prefix === '' ? name : `${prefix}.${name}`;
    if (!(node instanceof ConfigField)) return describeConfig(node, key);
    const { spec } = node;
    return [{ key, env: spec.env, type: node.typeName, default: spec.default, doc: spec.doc }];
  });
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AenvError('CONFIG_FILE_UNREADABLE', `cannot read config file ${file}`, {
      cause: err,
      fields: { path: file },
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new AenvError('CONFIG_FILE_UNREADABLE', `config file ${file} is not JSON: ${detail}`, {
      cause: err,
      fields: { path: file },
    });
  }
  if (!isPlainObject(parsed)) {
    throw new AenvError('CONFIG_FILE_UNREADABLE', `config file ${file} must hold a JSON object`, {
      fields: { path: file },
    });
  }
  return parsed;
}

function resolveSection(
  schema: ConfigSchema,
  values: Record<string, unknown>,
  prefix: string,
  walk: Walk,
): Record<string, unknown> {
  rejectUnknownKeys(schema, values, prefix, walk.file);
  const out: Record<string, unknown> = {};
  for (const [name, node] of Object.entries(schema)) {
    const key = prefix === '' ? name : `${prefix}.${name}`;
    const value = values[name];
    if (node instanceof ConfigField) {
      out[name] = resolveField(node, value, key, walk);
      continue;
    }
    if (value !== undefined && !isPlainObject(value)) {
      throw new AenvError(
        'CONFIG_INVALID_VALUE',
        `config key '${key}' (file ${walk.file ?? '?'}): expected a section (JSON object)`,
        { fields: { key } },
      );
    }
    out[name] = resolveSection(node, value ?? {}, key, walk);
  }
  return out;
}

function resolveField(
  node: ConfigField<unknown>,
  fileValue: unknown,
  key: string,
  walk: Walk,
): unknown {
  const envName = node.spec.env;
  const envValue = envName === undefined ? undefined : walk.env[envName];
  if (envName !== undefined && envValue !== undefined && envValue !== '') {
    return node.fromEnv(envValue, { key, origin: `env ${envName}`, baseDir: walk.cwd });
  }
  if (fileValue !== undefined && walk.file !== undefined) {
    const at: ValueSource = { key, origin: `file ${walk.file}`, baseDir: dirname(walk.file) };
    return node.fromJson(fileValue, at);
  }
  const def = node.spec.default;
  if (def === undefined) return undefined;
  return node.fromJson(def, { key, origin: 'default', baseDir: walk.cwd });
}

function rejectUnknownKeys(
  schema: ConfigSchema,
  values: Record<string, unknown>,
  prefix: string,
  file: string | undefined,
): void {
  const known = Object.keys(schema);
  for (const name of Object.keys(values)) {
    if (Object.hasOwn(schema, name)) continue;
    const key = prefix === '' ? name : `${prefix}.${name}`;
    const where = prefix === '' ? 'at the top level' : `under '${prefix}'`;
    throw new AenvError(
      'CONFIG_UNKNOWN_KEY',
      `unknown config key '${key}' in ${file ?? 'config'}; known keys ${where}: ${known.join(', ')}`,
      { fields: { key, path: file } },
    );
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
