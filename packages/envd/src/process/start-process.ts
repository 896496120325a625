/**
 * `process.Process/Start` and `Connect`: start a process (or attach to one)
 * and stream its events: `start` first, then `data` and `keepalive`, then
 * exactly one `end`.
 *
 * A client that goes away detaches without killing the process; only the
 * `Connect-Timeout-Ms` of `Start` bounds the process's life (SIGKILL to its
 * group, and the stream ends with `deadline_exceeded`).
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { AenvError } from '@aenv/shared';
import type { EnvdContext } from '../envd-context.js';
import type {
  ConnectRequest,
  ProcessEventSchema,
  StartRequest,
} from '../gen/process/process_pb.js';
import { keepaliveInterval, pumpEvents } from '../rpc/keepalive-pump.js';
import { basicAuthUser } from '../state/envd-state.js';
import type { UserInfo } from '../users/user-db.js';
import type { ManagedProcess, ProcessEvent } from './managed-process.js';
import type { ProcessHandle, SpawnSpec } from './process-handle.js';
import { assertExecutable, processEnv, assertNoNulBytes } from './process-env.js';
import { spawnPipes } from './spawn-pipes.js';
import { spawnPty } from './spawn-pty.js';

/** A `StartResponse` or `ConnectResponse` (both are `{event: ProcessEvent}`). */
export interface ProcessEventMessage {
  readonly event: MessageInitShape<typeof ProcessEventSchema>;
}

/** The user a request runs as (its Basic auth user, else the default). */
export function requestUser(ctx: EnvdContext, hctx: HandlerContext): UserInfo {
  return ctx.state.resolveUser(basicAuthUser(hctx.requestHeader.get('authorization')));
}

/**
 * Checks the Basic auth user of a request that does not act as a user
 * (`Connect`, `List`): a named user must exist; none named is fine.
 */
export function checkNamedUser(ctx: EnvdContext, hctx: HandlerContext): void {
  const name = basicAuthUser(hctx.requestHeader.get('authorization'));
  if (name !== undefined && name !== '') ctx.state.resolveUser(name);
}

function toMessage(event: ProcessEvent): ProcessEventMessage {
  if (event.kind === 'data') {
    return {
      event: {
        event: { case: 'data', value: { output: { case: event.output, value: event.data } } },
      },
    };
  }
  return { event: { event: { case: 'end', value: { ...event.exit } } } };
}

function keepaliveMessage(): ProcessEventMessage {
  return { event: { event: { case: 'keepalive', value: {} } } };
}

async function resolveCwd(ctx: EnvdContext, raw: string, user: UserInfo): Promise<string> {
  const cwd = await ctx.paths.resolve(raw, user, ctx.state.defaultWorkdir);
  const isDir = await stat(cwd).then(
    (st) => st.isDirectory(),
    () => false,
  );
  if (!isDir) {
    throw new AenvError('ENVD_CWD_NOT_FOUND', `cwd '${cwd}' does not exist`, { fields: { cwd } });
  }
  return cwd;
}

async function spawnSpec(ctx: EnvdContext, req: StartRequest, user: UserInfo): Promise<SpawnSpec> {
  const config = req.process;
  if (config === undefined || config.cmd === '') {
    throw new AenvError('INVALID_ARGUMENT', 'process.cmd is required');
  }
  const cwd = await resolveCwd(ctx, config.cwd ?? '', user);
  const env = processEnv(user, ctx.state.envVars, config.envs);
  assertNoNulBytes(config.cmd, config.args, env);
  await assertExecutable(config.cmd, env.PATH, cwd);
  const size = req.pty?.size;
  return {
    cmd: config.cmd,
    args: config.args,
    env,
    cwd,
    user,
    stdin: req.stdin !== false,
    ...(req.pty !== undefined ? { pty: { cols: size?.cols ?? 80, rows: size?.rows ?? 24 } } : {}),
  };
}

async function launch(
  ctx: EnvdContext,
  req: StartRequest,
  spec: SpawnSpec,
): Promise<ManagedProcess> {
  const handle: ProcessHandle =
    spec.pty !== undefined ? await spawnPty(spec) : await spawnPipes(spec, ctx.execHelper);
  const config = req.process;
  const proc = ctx.processes.add(
    handle,
    { cmd: spec.cmd, args: spec.args, envs: config?.envs ?? {}, cwd: config?.cwd },
    req.tag,
    spec.pty !== undefined,
  );
  ctx.logger.log('info', 'process started', { pid: proc.pid, cmd: spec.cmd, user: spec.user.name });
  void proc.ended.then((exit) =>
    ctx.logger.log('info', 'process ended', { pid: proc.pid, status: exit.status }),
  );
  return proc;
}

async function* stream(
  proc: ManagedProcess,
  hctx: HandlerContext,
): AsyncGenerator<ProcessEventMessage> {
  const queue = proc.subscribe(hctx.signal);
  yield { event: { event: { case: 'start', value: { pid: proc.pid } } } };
  yield* pumpEvents(queue, {
    signal: hctx.signal,
    intervalMs: keepaliveInterval(hctx.requestHeader),
    keepalive: keepaliveMessage,
    toMessage,
    isLast: (event) => event.kind === 'end',
  });
}

/** `Start`: runs a command and streams its events. */
export async function* startProcess(
  ctx: EnvdContext,
  req: StartRequest,
  hctx: HandlerContext,
): AsyncGenerator<ProcessEventMessage> {
  const user = requestUser(ctx, hctx);
  const spec = await spawnSpec(ctx, req, user);
  const proc = await launch(ctx, req, spec);
  const timeoutMs = hctx.timeoutMs();
  if (timeoutMs !== undefined) proc.killAfter(Math.max(timeoutMs, 0));
  yield* stream(proc, hctx);
}

/** `Connect`: attaches to a running process and streams its new events. */
export async function* connectProcess(
  ctx: EnvdContext,
  req: ConnectRequest,
  hctx: HandlerContext,
): AsyncGenerator<ProcessEventMessage> {
  checkNamedUser(ctx, hctx);
  const proc = ctx.processes.get(req.process?.selector);
  yield* stream(proc, hctx);
}
