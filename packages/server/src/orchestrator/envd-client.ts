/**
 * The node's side of envd's plain HTTP API: waiting until envd answers
 * `/health`, and `/init` (env vars, access token, clock, fresh entropy).
 *
 * Each call uses a new connection (no keep-alive pool): a slot's address
 * is reused by the next sandbox, and a pooled connection to a machine that
 * is gone must never carry a request meant for the new one.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';
import type { GuestAddress } from './sandbox.js';

/** The port envd listens on inside every guest. */
export const ENVD_PORT = 49983;

/**
 * What a template gives every sandbox made from it (its image's `Env`,
 * `User` and `WorkingDir`, changed by its build steps): sent with every
 * `/init`, under the sandbox's own env vars.
 */
export interface EnvdDefaults {
  readonly envVars: Readonly<Record<string, string>>;
  readonly user?: string | undefined;
  readonly workdir?: string | undefined;
}

/** What `/init` sets. */
export interface EnvdInit {
  readonly envVars: Readonly<Record<string, string>>;
  /** The token envd demands from now on. */
  readonly accessToken?: string | undefined;
  /** The token envd demands now (set by an earlier /init, e.g. before a snapshot). */
  readonly currentToken?: string | undefined;
  readonly defaultUser?: string | undefined;
  readonly defaultWorkdir?: string | undefined;
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** One HTTP exchange on a fresh connection. */
function exchange(
  addr: GuestAddress,
  method: string,
  path: string,
  opts: { body?: string; headers?: Record<string, string>; timeoutMs: number },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: addr.host,
        port: addr.port,
        method,
        path,
        agent: false,
        headers: { connection: 'close', ...opts.headers },
        timeout: opts.timeoutMs,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`envd ${path}: no answer in ${opts.timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * Polls `GET /health` until envd answers 2xx.
 * @throws {AenvError} `SBX_START_TIMEOUT` after `timeoutMs`; the abort reason when aborted.
 */
export async function waitForEnvd(
  addr: GuestAddress,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    try {
      const timeout = Math.min(2000, Math.max(1, deadline - Date.now()));
      const res = await exchange(addr, 'GET', '/health', { timeoutMs: timeout });
      if (res.status >= 200 && res.status < 300) return;
      lastError = new Error(`health answered ${res.status}`);
    } catch (err) {
      lastError = err;
    }
    await sleep(25, undefined, { signal });
  }
  throw new AenvError('SBX_START_TIMEOUT', `envd did not answer within ${timeoutMs} ms`, {
    cause: lastError,
  });
}

/**
 * Calls envd `POST /init` with the sandbox's settings, the current time and
 * fresh entropy (so clones of one snapshot do not share RNG state).
 * @throws {AenvError} `SBX_ENVD_FAILED` when envd refuses or cannot be reached.
 */
export async function initEnvd(addr: GuestAddress, init: EnvdInit): Promise<void> {
  const body = JSON.stringify({
    envVars: init.envVars,
    accessToken: init.accessToken,
    defaultUser: init.defaultUser,
    defaultWorkdir: init.defaultWorkdir,
    timestamp: new Date().toISOString(),
    entropy: randomBytes(64).toString('base64'),
  });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.currentToken !== undefined) headers['x-access-token'] = init.currentToken;
  let res: Answer;
  try {
    res = await exchange(addr, 'POST', '/init', { body, headers, timeoutMs: 10_000 });
  } catch (err) {
    throw new AenvError('SBX_ENVD_FAILED', 'envd /init could not be reached', { cause: err });
  }
  if (res.status < 200 || res.status >= 300) {
    throw new AenvError(
      'SBX_ENVD_FAILED',
      `envd /init answered ${res.status}: ${res.body.slice(0, 200)}`,
    );
  }
}

/**
 * Reads envd's `GET /metrics` (cpu, memory, disk of the guest).
 * @throws {AenvError} `SBX_ENVD_FAILED` when envd refuses or cannot be reached.
 */
export async function envdMetrics(
  addr: GuestAddress,
  token: string | undefined,
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = token === undefined ? {} : { 'x-access-token': token };
  let res: Answer;
  try {
    res = await exchange(addr, 'GET', '/metrics', { headers, timeoutMs: 5000 });
  } catch (err) {
    throw new AenvError('SBX_ENVD_FAILED', 'envd /metrics could not be reached', { cause: err });
  }
  if (res.status !== 200) {
    throw new AenvError('SBX_ENVD_FAILED', `envd /metrics answered ${res.status}`);
  }
  return JSON.parse(res.body) as Record<string, unknown>;
}
