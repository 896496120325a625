/**
 * `@aenv/envd`: the guest agent of aenv, speaking E2B's envd protocol.
 *
 * Contract with package `guest`: {@link ENVD_BUNDLE_DIR} is a directory
 * holding `envd.mjs` (one JavaScript bundle that runs with only the node
 * binary, from any working directory) plus the native files it loads
 * relative to itself (`build/Release/pty.node`, `envd-exec`); `npm run build`
 * produces it. Run it as `node <dir>/envd.mjs --port 49983` (see `--help`).
 *
 * @module
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export { ENVD_VERSION } from './version.js';
export { ENVD_DEFAULT_PORT, startEnvd, type EnvdHandle, type EnvdOptions } from './start-envd.js';
export type { EnvdLogger, LogLevel } from './logger.js';
export { fileSignature, type FileOperation } from './files/file-signature.js';

/** Absolute path of the bundle directory (`packages/envd/bundle`). */
export const ENVD_BUNDLE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bundle');
