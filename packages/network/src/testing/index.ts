/**
 * Test support the network package ships for other packages' suites
 * (`@aenv/network/testing`): nothing here is used by the slot code.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';

/** Path of the compiled probe agent (`probe-agent.js`), to run with node. */
export const PROBE_AGENT_PATH = fileURLToPath(new URL('./probe-agent.js', import.meta.url));
