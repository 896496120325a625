/**
 * Processes of the dev cluster: started detached (they outlive
 * `aenv dev cluster up`), logging to files in the cluster's directory,
 * and stopped by pid (`down`), politely then by force.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Starts `command` with its output appended to `log`; returns its pid.
 * Detached (own process group, outlives us) unless `attached` (tests: an
 * interrupt of the test's process group reaches it too).
 */
export function startDetached(
  command: string,
  args: readonly string[],
  o: {
    env: Readonly<Record<string, string | undefined>>;
    log: string;
    cwd?: string;
    attached?: boolean;
  },
): number {
  const fd = openSync(o.log, 'a');
  try {
    const child = spawn(command, args, {
      env: o.env,
      cwd: o.cwd,
      detached: o.attached !== true,
      stdio: ['ignore', fd, fd],
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** Whether a process runs (zombies of our own children count until reaped). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal`, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopProcess(
  pid: number,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 30_000,
): Promise<void> {
  if (!running(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (running(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return;
      }
    }
    await sleep(100);
  }
}

/** Polls `check` until it is true or `timeoutMs` passes. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}
