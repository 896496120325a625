/**
 * The `process.Process` Connect service: wires each RPC to its handler.
 *
 * @module
 */
import type { ServiceImpl } from '@connectrpc/connect';
import { AenvError } from '@aenv/shared';
import type { EnvdContext } from '../envd-context.js';
import {
  Signal,
  type Process,
  type ProcessInput,
  type StreamInputRequest,
} from '../gen/process/process_pb.js';
import { serverStream, unary } from '../rpc/rpc-errors.js';
import type { ManagedProcess } from './managed-process.js';
import { checkNamedUser, connectProcess, startProcess } from './start-process.js';

function inputError(proc: ManagedProcess, message: string): AenvError {
  return new AenvError('ENVD_PROCESS_INPUT_INVALID', message, { fields: { pid: proc.pid } });
}

/** Writes stdin or terminal input, refusing the kind the process does not have. */
function writeInput(proc: ManagedProcess, input: ProcessInput | undefined): void {
  const { case: kind, value } = input?.input ?? { case: undefined };
  if (kind === undefined) throw new AenvError('INVALID_ARGUMENT', 'input is empty');
  if (kind === 'stdin' && proc.isPty) {
    throw inputError(
      proc,
      'tty assigned to process, input should be written to the pty, not the stdin',
    );
  }
  if (kind === 'pty' && !proc.isPty) {
    throw inputError(
      proc,
      'tty not assigned to process, input should be written to the stdin, not the tty',
    );
  }
  if (!proc.handle.inputOpen) throw inputError(proc, 'stdin not enabled or closed');
  proc.handle.write(value);
}

async function streamInput(
  ctx: EnvdContext,
  requests: AsyncIterable<StreamInputRequest>,
): Promise<object> {
  let proc: ManagedProcess | undefined;
  for await (const req of requests) {
    const event = req.event;
    if (event.case === 'start') proc = ctx.processes.get(event.value.process?.selector);
    if (event.case === 'data') {
      if (proc === undefined)
        throw new AenvError('INVALID_ARGUMENT', 'data before the start event');
      writeInput(proc, event.value.input);
    }
  }
  return {};
}

const SIGNALS: Partial<Record<Signal, NodeJS.Signals>> = {
  [Signal.SIGKILL]: 'SIGKILL',
  [Signal.SIGTERM]: 'SIGTERM',
};

/** The implementation of `process.Process` for one envd. */
export function processService(ctx: EnvdContext): ServiceImpl<typeof Process> {
  const log = ctx.logger;
  return {
    start: serverStream(log, 'Start', (req, hctx) => startProcess(ctx, req, hctx)),
    connect: serverStream(log, 'Connect', (req, hctx) => connectProcess(ctx, req, hctx)),
    list: unary(log, 'List', (_req, hctx) => {
      checkNamedUser(ctx, hctx);
      return {
        processes: ctx.processes.list().map((p) => ({
          pid: p.pid,
          tag: p.tag,
          config: {
            cmd: p.config.cmd,
            args: [...p.config.args],
            envs: { ...p.config.envs },
            cwd: p.config.cwd,
          },
        })),
      };
    }),
    sendInput: unary(log, 'SendInput', (req) => {
      writeInput(ctx.processes.get(req.process?.selector), req.input);
      return {};
    }),
    streamInput: unary(log, 'StreamInput', (requests: AsyncIterable<StreamInputRequest>) =>
      streamInput(ctx, requests),
    ),
    sendSignal: unary(log, 'SendSignal', (req) => {
      const proc = ctx.processes.get(req.process?.selector);
      const signal = SIGNALS[req.signal];
      if (signal === undefined)
        throw new AenvError('NOT_SUPPORTED', `invalid signal: ${req.signal}`);
      proc.signal(signal);
      return {};
    }),
    update: unary(log, 'Update', (req) => {
      const proc = ctx.processes.get(req.process?.selector);
      const size = req.pty?.size;
      if (req.pty === undefined || size === undefined) return {};
      if (proc.handle.resize === undefined) throw inputError(proc, 'tty not assigned to process');
      proc.handle.resize(Math.max(1, size.cols), Math.max(1, size.rows));
      return {};
    }),
    closeStdin: unary(log, 'CloseStdin', (req) => {
      const proc = ctx.processes.get(req.process?.selector);
      if (proc.isPty)
        throw inputError(proc, 'cannot close stdin for PTY process, send Ctrl+D (0x04) instead');
      proc.handle.closeInput();
      return {};
    }),
  };
}
