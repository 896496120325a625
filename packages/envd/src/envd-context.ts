/**
 * Everything a request handler of one envd instance can reach: its state,
 * account database, path rules, running processes and watchers, logger.
 *
 * @module
 */
import type { EnvdLogger } from './logger.js';
import type { PathResolver } from './paths/path-resolver.js';
import type { ProcessTable } from './process/process-table.js';
import type { EnvdState } from './state/envd-state.js';
import type { WatcherRegistry } from './filesystem/watcher-registry.js';

/** The shared services of one envd. */
export interface EnvdContext {
  readonly state: EnvdState;
  readonly paths: PathResolver;
  readonly processes: ProcessTable;
  readonly watchers: WatcherRegistry;
  readonly logger: EnvdLogger;
  /** The run-as-user exec helper, when available. */
  readonly execHelper: string | undefined;
  /** Whether `/init` may set the system clock. */
  readonly setClock: boolean;
  /** The RNG reseed helper (`envd-entropy`), when available. */
  readonly entropyHelper: string | undefined;
}
