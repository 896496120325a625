/**
 * `GET /metrics`: the node's Prometheus metrics (text exposition 0.0.4).
 * Public like `/health`: it carries counts and latencies, no ids or secrets.
 * A request naming a sandbox goes to that sandbox's envd `/metrics` instead.
 *
 * @module
 */
import type { ApiContext } from '../api-context.js';
import type { Reply } from '../router.js';

/** The Prometheus handler. */
export function nodeMetrics(api: ApiContext) {
  return (): Reply => ({
    status: 200,
    headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
    text: api.metrics.render(),
  });
}
