/**
 * Starts an envd in this process: the programmatic entry point (tests, other
 * packages) behind the `envd` command line.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { EnvdContext } from './envd-context.js';
import { WatcherRegistry } from './filesystem/watcher-registry.js';
import { jsonLogger, silentLogger, type EnvdLogger } from './logger.js';
import { PathResolver } from './paths/path-resolver.js';
import { ProcessTable } from './process/process-table.js';
import { createDualServer } from './server/dual-listener.js';
import { createRequestHandler } from './server/request-handler.js';
import { EnvdState } from './state/envd-state.js';
import { UserDb } from './users/user-db.js';

/** The port E2B's SDKs expect envd on. */
export const ENVD_DEFAULT_PORT = 49983;

/** How to run an envd. Every field has a default fit for a sandbox. */
export interface EnvdOptions {
  /** TCP port; 0 picks a free one. @default 49983 */
  readonly port?: number;
  /** Address to listen on. @default '0.0.0.0' */
  readonly host?: string;
  /** Paths of every file API and process cwd must stay under it. @default '/' */
  readonly root?: string;
  /** The account database. @default '/etc/passwd' */
  readonly passwdFile?: string;
  /** @default '/etc/group' */
  readonly groupFile?: string;
  /** Initial default user (`/init` may change it). @default `user` if it exists, else `root` */
  readonly defaultUser?: string;
  /** Initial default working directory (`/init` may change it). @default the user's home */
  readonly defaultWorkdir?: string;
  /** Initial access token (`/init` may set it). @default none */
  readonly accessToken?: string;
  /** Initial global environment variables. */
  readonly envVars?: Readonly<Record<string, string>>;
  /** Whether `/init` may set the system clock from its `timestamp`. @default false */
  readonly setClock?: boolean;
  /** The run-as-user exec helper; `null` disables it. @default `envd-exec` next to envd, if present */
  readonly execHelper?: string | null;
  /**
   * The helper `/init` feeds `entropy` to (reseeds the kernel RNG at once);
   * `null` disables it (entropy is then only written to /dev/urandom).
   * @default `envd-entropy` next to envd, if present
   */
  readonly entropyHelper?: string | null;
  /** Where logs go; `null` silences them. @default JSON lines on stderr */
  readonly logger?: EnvdLogger | null;
}

/** A running envd. */
export interface EnvdHandle {
  /** The port it listens on. */
  readonly port: number;
  /** `http://<host>:<port>`, with a loopback host when listening on all addresses. */
  readonly url: string;
  /** Stops listening, kills the processes it started, stops watchers. */
  close(): Promise<void>;
}

/** A helper program shipped next to the running code, if any. */
function bundledHelper(name: string): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  // In the bundle it sits next to envd.mjs; from dist/src it is in ../../bundle.
  for (const candidate of [join(here, name), join(here, '..', '..', 'bundle', name)]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function createContext(options: EnvdOptions): Promise<EnvdContext> {
  const state = new EnvdState(new UserDb(options.passwdFile, options.groupFile));
  state.accessToken = options.accessToken;
  state.defaultUser = options.defaultUser;
  state.defaultWorkdir = options.defaultWorkdir;
  for (const [key, value] of Object.entries(options.envVars ?? {})) state.envVars.set(key, value);
  return {
    state,
    paths: await PathResolver.create(options.root ?? '/'),
    processes: new ProcessTable(),
    watchers: new WatcherRegistry(),
    logger: options.logger === null ? silentLogger : (options.logger ?? jsonLogger()),
    execHelper:
      options.execHelper === null ? undefined : (options.execHelper ?? bundledHelper('envd-exec')),
    setClock: options.setClock ?? false,
    entropyHelper:
      options.entropyHelper === null
        ? undefined
        : (options.entropyHelper ?? bundledHelper('envd-entropy')),
  };
}

/** Starts an envd; resolves once it listens. */
export async function startEnvd(options: EnvdOptions = {}): Promise<EnvdHandle> {
  const ctx = await createContext(options);
  const server = createDualServer(createRequestHandler(ctx));
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.tcp.once('error', reject);
    server.tcp.listen(options.port ?? ENVD_DEFAULT_PORT, host, () => resolve());
  });
  const port = (server.tcp.address() as AddressInfo).port;
  const urlHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  ctx.logger.log('info', 'envd listening', { host, port, root: ctx.paths.root });
  let closed: Promise<void> | undefined;
  return {
    port,
    url: `http://${urlHost}:${port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        ctx.processes.killAll();
        ctx.watchers.closeAll();
        server.tcp.close(() => resolve());
        server.destroyConnections();
      });
      return closed;
    },
  };
}
