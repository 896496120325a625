/**
 * Registry credentials from Docker's client configuration
 * (`$DOCKER_CONFIG/config.json`, default `~/.docker/config.json`), so a
 * node pulls private images with what `docker login` stored:
 *
 * - `auths.<registry>.auth` (base64 `user:password`) or
 *   `auths.<registry>.username` + `password`; keys may be URLs
 *   (`https://index.docker.io/v1/` is Docker Hub);
 * - `credHelpers.<registry>` or `credsStore`: the helper
 *   `docker-credential-<name> get` is run with the registry on stdin and
 *   answers `{"Username", "Secret"}`.
 *
 * `identitytoken` (an OAuth refresh token) is not supported; such entries are
 * treated as absent. The file is read at each lookup, so a `docker login`
 * while the node runs takes effect.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** A user name and password (or token) for one registry. */
export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

/** Finds credentials for a registry host. */
export type CredentialSource = (registry: string) => Promise<RegistryCredentials | undefined>;

interface AuthEntry {
  readonly auth?: string;
  readonly username?: string;
  readonly password?: string;
}

interface DockerConfig {
  readonly auths?: Readonly<Record<string, AuthEntry>>;
  readonly credHelpers?: Readonly<Record<string, string>>;
  readonly credsStore?: string;
}

/** The registry a config key names: scheme, path and Docker Hub's legacy names stripped. */
export function registryOfConfigKey(key: string): string {
  const host = key.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

function fromEntry(entry: AuthEntry): RegistryCredentials | undefined {
  if (typeof entry.auth === 'string' && entry.auth !== '') {
    const text = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon > 0) return { username: text.slice(0, colon), password: text.slice(colon + 1) };
  }
  if (typeof entry.username === 'string' && typeof entry.password === 'string') {
    return { username: entry.username, password: entry.password };
  }
  return undefined;
}

function runHelper(helper: string, registry: string): Promise<RegistryCredentials | undefined> {
  return new Promise((resolve) => {
    const child = execFile(
      `docker-credential-${helper}`,
      ['get'],
      { timeout: 10_000, maxBuffer: 1 << 20 },
      (err, stdout) => {
        if (err !== null) return resolve(undefined);
        try {
          const parsed = JSON.parse(stdout) as { Username?: unknown; Secret?: unknown };
          if (typeof parsed.Username === 'string' && typeof parsed.Secret === 'string') {
            return resolve({ username: parsed.Username, password: parsed.Secret });
          }
        } catch {
          // An unreadable answer is no credentials.
        }
        resolve(undefined);
      },
    );
    child.stdin?.end(registry === 'docker.io' ? 'https://index.docker.io/v1/' : registry);
  });
}

/**
 * Looks credentials up in a Docker client configuration file.
 * @param file the `config.json`; a missing or unreadable file means no credentials.
 */
export function dockerConfigCredentials(file: string): CredentialSource {
  return async (registry) => {
    let config: DockerConfig;
    try {
      config = JSON.parse(await readFile(file, 'utf8')) as DockerConfig;
    } catch {
      return undefined;
    }
    for (const [key, entry] of Object.entries(config.auths ?? {})) {
      if (registryOfConfigKey(key) !== registry) continue;
      const found = fromEntry(entry);
      if (found !== undefined) return found;
    }
    const helper =
      Object.entries(config.credHelpers ?? {}).find(
        ([k]) => registryOfConfigKey(k) === registry,
      )?.[1] ?? config.credsStore;
    if (typeof helper === 'string' && /^[A-Za-z0-9_.-]+$/.test(helper)) {
      return runHelper(helper, registry);
    }
    return undefined;
  };
}
