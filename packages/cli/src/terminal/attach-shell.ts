/**
 * Attaches this terminal to a shell in a sandbox: a PTY of this terminal's
 * size, keystrokes sent as they come (raw mode, so Ctrl-C and arrows reach
 * the sandbox), output written as it arrives, resizes followed. When stdin
 * is not a terminal (a pipe), its end sends Ctrl-D so the shell exits once
 * the input is consumed. Resolves with the shell's exit status.
 *
 * @module
 */
import type { Sandbox } from '@aenv/sdk';
import type { CliContext } from '../cli-context.js';
import { exitStatusOf } from './exit-status.js';

/** How to start the shell. */
export interface ShellOptions {
  readonly user?: string | undefined;
  readonly cwd?: string | undefined;
}

/** Runs an interactive shell in `sandbox` on this terminal; resolves with its exit status. */
export async function attachShell(
  ctx: CliContext,
  sandbox: Sandbox,
  options: ShellOptions = {},
): Promise<number> {
  const size = (): { cols: number; rows: number } => ({
    cols: ctx.stdout.columns ?? 80,
    rows: ctx.stdout.rows ?? 24,
  });
  const handle = await sandbox.pty.create({
    ...size(),
    onData: (bytes) => ctx.stdout.write(bytes),
    ...(options.user === undefined ? {} : { user: options.user }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  // Input is sent in order, one SendInput at a time.
  let input = Promise.resolve();
  const send = (data: Uint8Array | string): void => {
    input = input.then(() => sandbox.pty.sendInput(handle.pid, data)).catch(() => undefined);
  };
  const onData = (chunk: Buffer): void => send(chunk);
  const raw = ctx.stdin.isTTY === true && ctx.stdin.setRawMode !== undefined;
  const onEnd = (): void => {
    if (!raw) send('\x04');
  };
  const stopResize = ctx.onResize?.(() => {
    sandbox.pty.resize(handle.pid, size()).catch(() => undefined);
  });
  if (raw) ctx.stdin.setRawMode?.(true);
  ctx.stdin.on('data', onData);
  ctx.stdin.on('end', onEnd);
  ctx.stdin.resume();
  try {
    return exitStatusOf(await handle.result());
  } finally {
    ctx.stdin.off('data', onData);
    ctx.stdin.off('end', onEnd);
    ctx.stdin.pause();
    if (raw) ctx.stdin.setRawMode?.(false);
    stopResize?.();
  }
}
