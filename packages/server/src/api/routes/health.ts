/**
 * `GET /health`: the node is up. Public (no API key). Requests carrying
 * `E2b-Sandbox-Id` never reach this: they go to the sandbox's envd.
 *
 * @module
 */
import type { Reply } from '../router.js';

/** The health handler. */
export function health(): Reply {
  return { status: 200, body: { status: 'ok' } };
}
