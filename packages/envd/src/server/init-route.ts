/**
 * `POST /init`: the control plane configures envd after boot and after every
 * restore: `{envVars, accessToken, timestamp, defaultUser, defaultWorkdir}`
 * (other fields of E2B's body, such as `volumeMounts` or `hyperloopIP`, are
 * accepted and ignored). Applying the same body twice changes nothing.
 *
 * Once a token is set, `/init` itself requires it in `X-Access-Token` (a
 * stricter rule than E2B's, whose `/init` is authenticated by its metadata
 * service): otherwise a process in the sandbox could replace the token and
 * then run commands as root. Changing the token means sending the current
 * one in the header and the new one in the body.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { AenvError } from '@aenv/shared';
import type { EnvdContext } from '../envd-context.js';
import { errorFields } from '../logger.js';

/** The fields of an `/init` body envd applies. */
export interface InitBody {
  readonly envVars?: Record<string, string>;
  readonly accessToken?: string;
  readonly timestamp?: string;
  readonly defaultUser?: string;
  readonly defaultWorkdir?: string;
}

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new AenvError('INVALID_ARGUMENT', `/init: ${key} must be a string`);
  return value;
}

/**
 * Validates an `/init` body.
 * @throws {AenvError} `INVALID_ARGUMENT`.
 */
export function parseInitBody(raw: unknown): InitBody {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AenvError('INVALID_ARGUMENT', '/init: body must be a JSON object');
  }
  const body = raw as Record<string, unknown>;
  const envVars = body.envVars;
  if (envVars !== undefined && envVars !== null) {
    const ok =
      typeof envVars === 'object' &&
      !Array.isArray(envVars) &&
      Object.values(envVars).every((v) => typeof v === 'string');
    if (!ok) throw new AenvError('INVALID_ARGUMENT', '/init: envVars must map names to strings');
  }
  const timestamp = optionalString(body, 'timestamp');
  if (timestamp !== undefined && Number.isNaN(Date.parse(timestamp))) {
    throw new AenvError('INVALID_ARGUMENT', `/init: timestamp '${timestamp}' is not RFC 3339`);
  }
  return {
    envVars: (envVars ?? undefined) as Record<string, string> | undefined,
    accessToken: optionalString(body, 'accessToken'),
    timestamp,
    defaultUser: optionalString(body, 'defaultUser'),
    defaultWorkdir: optionalString(body, 'defaultWorkdir'),
  };
}

/** Sets the system clock with `date` (envd has no other way from Node). */
function setSystemClock(ctx: EnvdContext, iso: string): void {
  const ms = Date.parse(iso);
  if (Math.abs(ms - Date.now()) < 50) return;
  const child = spawn('date', ['-u', '-s', `@${(ms / 1000).toFixed(3)}`], { stdio: 'ignore' });
  child.on('error', (err) => ctx.logger.log('warn', 'cannot set the clock', errorFields(err)));
  child.on('exit', (code) => {
    if (code !== 0) ctx.logger.log('warn', 'cannot set the clock', { exitCode: code });
  });
}

/** Applies an `/init` body. */
export function applyInit(ctx: EnvdContext, body: InitBody): void {
  const state = ctx.state;
  for (const [key, value] of Object.entries(body.envVars ?? {})) state.envVars.set(key, value);
  if (body.accessToken !== undefined)
    state.accessToken = body.accessToken === '' ? undefined : body.accessToken;
  if (body.defaultUser !== undefined && body.defaultUser !== '')
    state.defaultUser = body.defaultUser;
  if (body.defaultWorkdir !== undefined && body.defaultWorkdir !== '')
    state.defaultWorkdir = body.defaultWorkdir;
  if (body.timestamp !== undefined && ctx.setClock) setSystemClock(ctx, body.timestamp);
}
