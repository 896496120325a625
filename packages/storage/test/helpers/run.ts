// Runs a command (qemu-img, qemu-io, mkfs...) with a timeout and returns its
// exit code and output; never throws on a non-zero exit.
import { execFile } from 'node:child_process';

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], timeoutMs = 120_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs and asserts exit code 0, returning stdout. */
export async function runOk(
  cmd: string,
  args: readonly string[],
  timeoutMs?: number,
): Promise<string> {
  const r = await run(cmd, args, timeoutMs);
  if (r.code !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}
