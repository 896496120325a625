/**
 * Running the host tools an artifact build needs (apt-get, dpkg-deb, lz4,
 * gcc, strip, mkfs.*, debootstrap) with useful failures: a missing tool
 * becomes `GUEST_TOOL_MISSING` naming the Debian package that has it; a
 * failing one becomes `GUEST_BUILD_FAILED` with the step name, the command
 * and the tail of its output.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { AenvError } from '@aenv/shared';

/** Debian packages that provide the commands the builds use. */
export const TOOL_PACKAGES: Readonly<Record<string, string>> = {
  'apt-get': 'apt',
  'apt-cache': 'apt',
  'dpkg-deb': 'dpkg',
  lz4: 'lz4',
  gcc: 'gcc (and libc6-dev)',
  strip: 'binutils',
  ldd: 'libc-bin',
  'mkfs.erofs': 'erofs-utils',
  'mkfs.ext4': 'e2fsprogs',
  debootstrap: 'debootstrap',
  chroot: 'coreutils',
  busybox: 'busybox-static',
};

/** Options of {@link runCommand}. */
export interface RunOptions {
  /** Build step, for error messages (`kernel: unpack`). */
  readonly step: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Receives each line of stdout and stderr as it arrives. */
  readonly onLine?: (line: string) => void;
  /** Write this to stdin. */
  readonly input?: Buffer | string;
  readonly signal?: AbortSignal;
}

const TAIL = 4000;

/**
 * Runs `cmd args`; resolves with its stdout.
 * @throws {AenvError} `GUEST_TOOL_MISSING`, `GUEST_BUILD_FAILED`.
 */
export function runCommand(
  cmd: string,
  args: readonly string[],
  options: RunOptions,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    let stdout = '';
    let tail = '';
    const outLines = lineSplitter(options.onLine);
    const errLines = lineSplitter(options.onLine);
    child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      tail = (tail + s).slice(-TAIL);
      outLines(s);
    });
    child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      tail = (tail + s).slice(-TAIL);
      errLines(s);
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') {
        const pkg = TOOL_PACKAGES[cmd] ?? 'the package that provides it';
        reject(
          new AenvError(
            'GUEST_TOOL_MISSING',
            `${options.step}: ${cmd} is not installed (apt-get install ${pkg})`,
            {
              cause: err,
              fields: { tool: cmd },
            },
          ),
        );
      } else reject(failed(cmd, args, options.step, err.message, err));
    });
    child.once('close', (code, signal) => {
      outLines('\n');
      errLines('\n');
      if (code === 0) resolve(stdout);
      else
        reject(
          failed(cmd, args, options.step, `${signal ?? `exit status ${code}`}\n${tail.trim()}`),
        );
    });
  });
}

function failed(
  cmd: string,
  args: readonly string[],
  step: string,
  detail: string,
  cause?: unknown,
): AenvError {
  const shown = [cmd, ...args].join(' ').slice(0, 300);
  return new AenvError('GUEST_BUILD_FAILED', `${step}: \`${shown}\` failed: ${detail}`, {
    cause,
    fields: { step },
  });
}

function lineSplitter(onLine: ((line: string) => void) | undefined): (chunk: string) => void {
  let pending = '';
  return (chunk) => {
    if (onLine === undefined) return;
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const p of parts) if (p.trim() !== '') onLine(p.trimEnd());
  };
}
