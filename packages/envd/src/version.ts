/**
 * The envd version this agent reports to the control plane (`envdVersion`).
 *
 * The e2b SDKs gate features on it (shared/reference/e2b-protocol.md §3.9), so
 * it is the highest version whose gated features this agent really
 * implements: 0.5.7 = recursive watch, metrics, `stdin: false`, default user
 * handled by envd, `CloseStdin`, octet-stream and gzip uploads. Per-file
 * metadata (0.6.2) is not implemented, so 0.6.x is not claimed, even though
 * `includeEntry` (0.6.3) and `allowNetworkMounts` (0.6.4) are honoured when a
 * client sends them.
 *
 * @module
 */

/** The semver envd reports; the control plane returns it as `envdVersion`. */
export const ENVD_VERSION = '0.5.7';
