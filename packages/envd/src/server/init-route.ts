/**
 * `POST /init`: the control plane configures envd after boot and after every
 * restore: `{envVars, accessToken, timestamp, defaultUser, defaultWorkdir}`
 * plus aenv's `entropy` (other fields of E2B's body, such as `volumeMounts`
 * or `hyperloopIP`, are accepted and ignored). Applying the same body twice
 * changes nothing (but mixing the same entropy again).
 *
 * `entropy` (base64, 1 to 512 bytes from the host's CSPRNG) exists because
 * clones of one snapshot start with the same kernel RNG state: envd hands
 * the bytes to `envd-entropy`, which mixes them into the pool and reseeds
 * the generator before `/init` answers, so two clones read different
 * `/dev/urandom` bytes from then on. Without the helper the bytes are only
 * written to /dev/urandom (mixed in, used from the kernel's next reseed)
 * and a warning is logged; a helper that fails fails `/init` (500).
 * The clock (`timestamp`, with `--set-clock`) is also set before `/init`
 * answers.
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
import { writeFile } from 'node:fs/promises';
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
  /** Random bytes from the host to mix into the guest's RNG. */
  readonly entropy?: Buffer;
}

/** Most entropy bytes one `/init` takes (what `envd-entropy` reads). */
export const MAX_INIT_ENTROPY = 512;

function parseEntropy(body: Record<string, unknown>): Buffer | undefined {
  const text = optionalString(body, 'entropy');
  if (text === undefined) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0 || bytes.length > MAX_INIT_ENTROPY || bytes.toString('base64') !== text) {
    throw new AenvError(
      'INVALID_ARGUMENT',
      `/init: entropy must be 1 to ${MAX_INIT_ENTROPY} bytes in canonical base64`,
    );
  }
  return bytes;
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
      Object.entries(envVars).every(
        ([k, v]) => typeof v === 'string' && !k.includes('\0') && !v.includes('\0'),
      );
    if (!ok)
      throw new AenvError(
        'INVALID_ARGUMENT',
        '/init: envVars must map names to strings without NUL bytes',
      );
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
    entropy: parseEntropy(body),
  };
}

/** Runs `program` with `input` on stdin; resolves with its exit code and stderr. */
function runWithInput(
  program: string,
  args: readonly string[],
  input?: Buffer,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr: stderr.trim() }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** Sets the system clock with `date` (when there is no envd-entropy helper). */
async function setSystemClock(ctx: EnvdContext, ms: number): Promise<void> {
  try {
    const { code, stderr } = await runWithInput('date', ['-u', '-s', `@${(ms / 1000).toFixed(3)}`]);
    if (code !== 0) ctx.logger.log('warn', 'cannot set the clock', { exitCode: code, stderr });
  } catch (err) {
    ctx.logger.log('warn', 'cannot set the clock', errorFields(err));
  }
}

/**
 * Mixes host entropy into the kernel RNG (see the module comment) and, when
 * `clockMs` is given, sets the clock in the same helper process.
 */
async function mixEntropy(
  ctx: EnvdContext,
  bytes: Buffer | undefined,
  clockMs: number | undefined,
): Promise<void> {
  if (ctx.entropyHelper === undefined) {
    if (clockMs !== undefined) await setSystemClock(ctx, clockMs);
    if (bytes === undefined) return;
    await writeFile('/dev/urandom', bytes);
    ctx.logger.log('warn', 'no envd-entropy helper: entropy mixed in, the RNG reseeds later');
    return;
  }
  const args = clockMs === undefined ? [] : ['--time', String(Math.round(clockMs))];
  const result = await runWithInput(ctx.entropyHelper, args, bytes).catch((err: unknown) => ({
    code: null,
    stderr: (err as Error).message,
  }));
  if (result.code !== 0) {
    throw new AenvError('INTERNAL', `/init: cannot reseed the RNG: ${result.stderr}`, {
      fields: { exitCode: result.code },
    });
  }
}

/**
 * Applies an `/init` body; resolves once the RNG is reseeded and the clock set.
 * @throws {AenvError} `INTERNAL` when the entropy helper fails.
 */
export async function applyInit(ctx: EnvdContext, body: InitBody): Promise<void> {
  const wanted = body.timestamp !== undefined && ctx.setClock ? Date.parse(body.timestamp) : NaN;
  // A clock already within 50 ms is left alone.
  const clockMs = Math.abs(wanted - Date.now()) >= 50 ? wanted : undefined;
  if (body.entropy !== undefined || clockMs !== undefined) {
    await mixEntropy(ctx, body.entropy, clockMs);
  }
  const state = ctx.state;
  for (const [key, value] of Object.entries(body.envVars ?? {})) state.envVars.set(key, value);
  if (body.accessToken !== undefined)
    state.accessToken = body.accessToken === '' ? undefined : body.accessToken;
  if (body.defaultUser !== undefined && body.defaultUser !== '')
    state.defaultUser = body.defaultUser;
  if (body.defaultWorkdir !== undefined && body.defaultWorkdir !== '')
    state.defaultWorkdir = body.defaultWorkdir;
}
