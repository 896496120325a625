/**
 * The two kinds of load the load test keeps up, each a set of loops that
 * run until `state.stop` is set, every sample timed against `state.t0`:
 *
 * - command streams: `sandbox.commands.run` of the real `e2b` SDK through
 *   the node's proxy, a long-lived command printing a line a second, its
 *   output taken as it streams (time to first output, each line's
 *   lateness, the whole; a stream that lost lines is an error);
 * - create cycles: create (API) → one command (proxy) → kill, with the
 *   create's own latency and the whole cycle's.
 *
 * Failures are counted by code (`load-stats.mjs` `errorCode`) per kind and
 * step, never thrown: the loop goes on, as a client would retry.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Sandbox } from 'e2b';
import { errorCode } from './load-stats.mjs';

/**
 * Seconds each streaming command runs, printing one line a second
 * ({@link setStreamSeconds}). A stream is a long-lived command whose output
 * an agent tails (a build, a test run, a server log): the proxy must carry
 * every line as it comes, and the node must start commands for 200 of them
 * while creates go on.
 */
let STREAM_SECONDS = 30;

/** Sets how long each streaming command runs. */
export function setStreamSeconds(s) {
  STREAM_SECONDS = s;
}

const streamCmd = (n) => `i=1; while [ $i -le ${n} ]; do echo line $i; i=$((i+1)); sleep 1; done`;
/** Per-operation limits of the SDK calls (`--op-timeout-s` changes them: {@link setOpTimeout}). */
let OP_TIMEOUT = { timeoutMs: 180_000, requestTimeoutMs: 180_000 };

/** Sets the limit of every SDK call of the loops (the SDK's `timeoutMs` and `requestTimeoutMs`). */
export function setOpTimeout(ms) {
  OP_TIMEOUT = { timeoutMs: ms, requestTimeoutMs: ms };
}
/** A failed loop waits this long before its next try (no hot loop on a dead node). */
const BACKOFF_MS = 1000;

/**
 * Shared state of a load run.
 * @typedef {object} LoadState
 * @property {number} t0 performance.now() at the start
 * @property {boolean} stop
 * @property {{ t: number, ms: number }[]} stream whole-stream latency
 * @property {{ t: number, ms: number }[]} firstOutput time to the first output
 * @property {{ t: number, ms: number }[]} lineLate each line's lateness against a 1 s beat
 * @property {{ t: number, ms: number }[]} create create latency (API)
 * @property {{ t: number, ms: number }[]} cycle create → command → kill
 * @property {{ t: number, code: string }[]} errors code: `<step>:<code>`
 * @property {Record<string, string[]>} messages the first few messages of each code
 */

/** @returns {LoadState} */
export function newLoadState() {
  return {
    t0: performance.now(),
    stop: false,
    stream: [],
    firstOutput: [],
    lineLate: [],
    create: [],
    cycle: [],
    errors: [],
    messages: {},
  };
}

const now = (state) => performance.now() - state.t0;

const MESSAGES_PER_CODE = 3;

function fail(state, step, err) {
  const code = `${step}:${errorCode(err)}`;
  state.errors.push({ t: now(state), code });
  const kept = (state.messages[code] ??= []);
  if (kept.length < MESSAGES_PER_CODE) kept.push(err instanceof Error ? err.message : String(err));
}

/**
 * One streaming command on `sandbox`: records the time to its first line,
 * its whole time and each line's lateness (arrival minus the first line's
 * arrival plus one second per line: what the proxy and the node added);
 * throws on lost lines.
 */
async function oneStream(state, sandbox) {
  const t = performance.now();
  const n = STREAM_SECONDS;
  let first;
  let lines = 0;
  const r = await sandbox.commands.run(streamCmd(n), {
    ...OP_TIMEOUT,
    onStdout: (data) => {
      const at = performance.now();
      first ??= at;
      for (let k = data.split('\n').length - 1; k > 0; k--) {
        if (lines > 0) state.lineLate.push({ t: now(state), ms: at - first - lines * 1000 });
        lines++;
      }
    },
  });
  const end = performance.now();
  if (r.exitCode !== 0) throw new Error(`STREAM_EXIT exit ${r.exitCode}`);
  if (lines !== n) {
    const total = r.stdout.split('\n').length - 1;
    throw new Error(`STREAM_LOST ${lines} of ${n} lines streamed, ${total} in the result`);
  }
  state.stream.push({ t: now(state), ms: end - t });
  state.firstOutput.push({ t: now(state), ms: (first ?? end) - t });
}

/**
 * `count` loops of streaming commands spread over `sandboxes`; resolves
 * when all loops saw `state.stop`.
 */
export function streamLoops(state, sandboxes, count) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const sandbox = sandboxes[i % sandboxes.length];
      while (!state.stop) {
        try {
          await oneStream(state, sandbox);
        } catch (err) {
          fail(state, 'stream', err);
          await sleep(BACKOFF_MS);
        }
      }
    }),
  );
}

/** One create → command → kill cycle. */
async function oneCycle(state, sdk) {
  const t = performance.now();
  let sandbox;
  try {
    sandbox = await Sandbox.create('base', {
      ...sdk,
      ...OP_TIMEOUT,
      timeoutMs: 600_000,
      metadata: { load: 'cycle' },
    });
  } catch (err) {
    fail(state, 'create', err);
    return false;
  }
  state.create.push({ t: now(state), ms: performance.now() - t });
  let ok = true;
  try {
    const r = await sandbox.commands.run('echo ok', OP_TIMEOUT);
    if (r.stdout.trim() !== 'ok') throw new Error(`CYCLE_OUTPUT got '${r.stdout.trim()}'`);
  } catch (err) {
    fail(state, 'cycle-command', err);
    ok = false;
  }
  try {
    await sandbox.kill(OP_TIMEOUT);
  } catch (err) {
    fail(state, 'kill', err);
    ok = false;
  }
  if (ok) state.cycle.push({ t: now(state), ms: performance.now() - t });
  return ok;
}

/** `count` loops of create cycles against the node `sdk` names. */
export function createLoops(state, sdk, count) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      while (!state.stop) {
        if (!(await oneCycle(state, sdk))) await sleep(BACKOFF_MS);
      }
    }),
  );
}
