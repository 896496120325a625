/**
 * Where the CLI finds a node: flags, then the environment (`AENV_*`, then
 * the `E2B_*` names the e2b SDK uses), then what `aenv auth login` stored,
 * then a node on this machine (http://127.0.0.1:8000 with the key from
 * `$AENV_HOME/api-key`, which is only ever sent to a loopback URL).
 *
 * Settings live in `$AENV_CLI_CONFIG`, else
 * `$XDG_CONFIG_HOME/aenv/cli.json`, else `~/.config/aenv/cli.json`,
 * written with mode 0600 (the key is a secret).
 *
 * @module
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError } from '../cli-error.js';

/** What `aenv auth login` stores. */
export interface StoredSettings {
  readonly url?: string;
  readonly key?: string;
  readonly sandboxUrl?: string;
}

/** The node a command talks to, and where each setting came from. */
export interface Connection {
  readonly url: string;
  readonly key: string | undefined;
  readonly sandboxUrl: string;
  /** `--url`, `$AENV_API_URL`, `settings`, `default`, ... */
  readonly urlSource: string;
  readonly keySource: string;
}

/** The default node: `aenv server` on this machine. */
export const DEFAULT_NODE_URL = 'http://127.0.0.1:8000';

type Env = Readonly<Record<string, string | undefined>>;

/** Where the settings file is. */
export function settingsPath(env: Env): string {
  if (env.AENV_CLI_CONFIG) return env.AENV_CLI_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'aenv', 'cli.json');
}

/** Reads the settings; none stored is `{}`. */
export function readSettings(path: string): StoredSettings {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read the settings file ${path}: ${(err as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed;
  } catch (err) {
    throw new CliError(
      `the settings file ${path} is not valid: ${(err as Error).message}`,
      `Run 'aenv auth login' to write it again, or remove it.`,
    );
  }
}

/** Stores the settings (mode 0600, replaced atomically). */
export function writeSettings(path: string, settings: StoredSettings): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/** Removes the settings; false when there were none. */
export function removeSettings(path: string): boolean {
  try {
    readFileSync(path);
  } catch {
    return false;
  }
  rmSync(path, { force: true });
  return true;
}

function pick(
  candidates: readonly (readonly [string | undefined, string])[],
): [string, string] | undefined {
  for (const [value, source] of candidates)
    if (value !== undefined && value !== '') return [value, source];
  return undefined;
}

/** Whether a URL names this machine (a local node's key may be sent to it). */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host);
  } catch {
    return false;
  }
}

function localNodeKey(env: Env): [string, string] | undefined {
  const path = join(env.AENV_HOME || '/var/lib/aenv', 'api-key');
  try {
    const key = readFileSync(path, 'utf8').trim();
    return key === '' ? undefined : [key, path];
  } catch {
    return undefined;
  }
}

/** Resolves the connection from flags, environment and stored settings. */
export function resolveConnection(
  flags: { readonly url?: string | undefined; readonly key?: string | undefined },
  env: Env,
  stored: StoredSettings,
): Connection {
  const [url, urlSource] = pick([
    [flags.url, '--url'],
    [env.AENV_API_URL, '$AENV_API_URL'],
    [env.E2B_API_URL, '$E2B_API_URL'],
    [stored.url, 'aenv auth'],
  ]) ?? [DEFAULT_NODE_URL, 'default'];
  const key =
    pick([
      [flags.key, '--key'],
      [env.AENV_API_KEY, '$AENV_API_KEY'],
      [env.E2B_API_KEY, '$E2B_API_KEY'],
      [stored.key, 'aenv auth'],
    ]) ?? (isLoopbackUrl(url) ? localNodeKey(env) : undefined);
  const sandboxUrl =
    flags.url !== undefined && flags.url !== ''
      ? flags.url
      : (pick([
          [env.AENV_SANDBOX_URL, ''],
          [env.E2B_SANDBOX_URL, ''],
          [urlSource === 'aenv auth' ? stored.sandboxUrl : undefined, ''],
        ])?.[0] ?? url);
  return {
    url: url.replace(/\/+$/, ''),
    key: key?.[0],
    sandboxUrl: sandboxUrl.replace(/\/+$/, ''),
    urlSource,
    keySource: key?.[1] ?? 'none',
  };
}
