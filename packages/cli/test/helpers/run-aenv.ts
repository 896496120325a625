/**
 * Runs `aenv` command lines for tests: in this process with captured
 * streams (fast; most suites), or as a real `aenv` process (exit statuses
 * as the shell sees them, piped stdin).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runCli, type CliIo } from '../../src/index.js';

/** The built `aenv` entry point. */
export const AENV_MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

/** What a run produced. */
export interface AenvRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command line in-process. `tty` makes stdout look like a terminal. */
export async function runAenv(
  argv: readonly string[],
  env: Record<string, string>,
  options: { input?: string | Buffer; tty?: boolean; cwd?: string } = {},
): Promise<AenvRun> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdin = new PassThrough();
  stdin.end(options.input ?? '');
  const sink = (into: Buffer[], isTTY: boolean) => ({
    isTTY,
    columns: 100,
    rows: 30,
    write: (chunk: string | Uint8Array) => into.push(Buffer.from(chunk)),
  });
  const io: CliIo = {
    stdout: sink(out, options.tty === true),
    stderr: sink(err, false),
    stdin,
    env,
    cwd: options.cwd ?? process.cwd(),
  };
  const code = await runCli(argv, io);
  return {
    code,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  };
}

/** Runs `aenv` as a process. */
export function spawnAenv(
  argv: readonly string[],
  env: Record<string, string>,
  options: { input?: string | Buffer; cwd?: string } = {},
): Promise<AenvRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AENV_MAIN, ...argv], {
      env,
      cwd: options.cwd ?? process.cwd(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({
        code: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.end(options.input ?? '');
  });
}
