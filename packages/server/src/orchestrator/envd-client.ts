/**
 * The node's side of envd's plain HTTP API: waiting until envd answers
 * `/health`, and `/init` (env vars, access token, clock, default user).
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';
import type { GuestAddress } from './sandbox.js';

/** The port envd listens on inside every guest. */
export const ENVD_PORT = 49983;

/** What `/init` sets. */
export interface EnvdInit {
  readonly envVars: Readonly<Record<string, string>>;
  readonly accessToken?: string;
  readonly defaultUser?: string;
  readonly defaultWorkdir?: string;
}

function baseUrl(addr: GuestAddress): string {
  return `http://${addr.host}:${addr.port}`;
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
      const res = await fetch(`${baseUrl(addr)}/health`, {
        signal: AbortSignal.timeout(Math.min(2000, Math.max(1, deadline - Date.now()))),
      });
      await res.body?.cancel();
      if (res.ok) return;
      lastError = new Error(`health answered ${res.status}`);
    } catch (err) {
      lastError = err;
    }
    await sleep(50, undefined, { signal });
  }
  throw new AenvError('SBX_START_TIMEOUT', `envd did not answer within ${timeoutMs} ms`, {
    cause: lastError,
  });
}

/**
 * Calls envd `POST /init`.
 * @throws {AenvError} `SBX_ENVD_FAILED` when envd refuses.
 */
export async function initEnvd(addr: GuestAddress, init: EnvdInit): Promise<void> {
  const body = {
    envVars: init.envVars,
    accessToken: init.accessToken,
    defaultUser: init.defaultUser,
    defaultWorkdir: init.defaultWorkdir,
    timestamp: new Date().toISOString(),
  };
  const res = await fetch(`${baseUrl(addr)}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok) {
    throw new AenvError(
      'SBX_ENVD_FAILED',
      `envd /init answered ${res.status}: ${text.slice(0, 200)}`,
    );
  }
}
