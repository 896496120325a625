/**
 * `@aenv/ui`: the aenv web dashboard. The React app is prebuilt into
 * `ui-dist/` by `npm run build`; {@link createUiHandler} serves it at
 * `/ui` with login sessions, API forwarding, live events and terminals.
 * Nodes (`@aenv/server`) and gateways (`@aenv/control-plane`) mount the
 * same handler. See docs/ui.md.
 *
 * @module
 */
export {
  createUiHandler,
  isUiPath,
  type UiHandler,
  type UiHostOptions,
  type UiLogger,
} from './ui-handler.js';
export {
  MetricsHistory,
  type HistoryPoint,
  type MetricsHistoryOptions,
  type MetricsSource,
} from './metrics/metrics-history.js';
export { UI_DIST_DIR } from './static/static-assets.js';
export { SESSION_COOKIE } from './session/session-store.js';
