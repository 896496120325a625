/**
 * Runs the system tools the slot manager drives (`ip`, `nft`, `conntrack`,
 * `sh`), optionally inside a named network namespace via `nsenter --net=`.
 *
 * Contract: a command either exits 0 and resolves with its output, or
 * rejects with `NET_COMMAND_FAILED` carrying the command line, exit status
 * and the head of stderr. Input is passed on stdin (so rule sets and batch
 * files never touch the disk); a command that outlives `timeoutMs` is killed
 * with SIGKILL and fails. `nsenter --net` is used rather than `ip netns exec`
 * because it only switches the network namespace (no private mount
 * namespace, no /sys remount), which is all these tools need and is cheaper.
 *
 * @module
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { AenvError } from '@aenv/shared';

/** Options of one command. */
export interface RunOptions {
  /** Written to the command's stdin. */
  readonly input?: string;
  /** Kill and fail after this long. Default 30 s. */
  readonly timeoutMs?: number;
  /** A descriptor the command inherits as fd 3. */
  readonly inheritFd?: number;
}

/** What a successful command printed. */
export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const STDERR_HEAD = 2000;

/** Runs commands in one network namespace (the manager's "host" namespace). */
export class CommandRunner {
  readonly #netnsPath: string | undefined;
  readonly #inheritFd: () => number | undefined;

  /**
   * @param netnsPath the namespace that host-side commands run in; `undefined`
   *   runs them in the caller's own namespace.
   * @param inheritFd a descriptor every command inherits as fd 3 (the prefix
   *   lock, see `prefix-lock.ts`), read at each spawn.
   */
  constructor(netnsPath?: string, inheritFd: () => number | undefined = () => undefined) {
    this.#netnsPath = netnsPath;
    this.#inheritFd = inheritFd;
  }

  /** The namespace host-side commands run in, if not the caller's. */
  get netnsPath(): string | undefined {
    return this.#netnsPath;
  }

  /**
   * Runs a command in the host namespace.
   * @throws {AenvError} `NET_COMMAND_FAILED`.
   */
  host(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const full = this.#netnsPath === undefined ? argv : nsenterArgv(this.#netnsPath, argv);
    return run(full, { inheritFd: this.#inheritFd(), ...options });
  }

  /**
   * Runs a command inside another namespace, given by its bind-mount path.
   * @throws {AenvError} `NET_COMMAND_FAILED`.
   */
  inNetns(
    netnsPath: string,
    argv: readonly string[],
    options: RunOptions = {},
  ): Promise<RunResult> {
    return run(nsenterArgv(netnsPath, argv), { inheritFd: this.#inheritFd(), ...options });
  }
}

function nsenterArgv(netnsPath: string, argv: readonly string[]): string[] {
  return ['nsenter', `--net=${netnsPath}`, '--', ...argv];
}

/**
 * Runs one command line without a shell.
 * @throws {AenvError} `NET_COMMAND_FAILED` when it cannot start, exits non-zero or times out.
 */
export function run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const [cmd, ...args] = argv;
  if (cmd === undefined) return Promise.reject(new AenvError('INTERNAL', 'empty command line'));
  return new Promise((resolve, reject) => {
    const extra = options.inheritFd === undefined ? [] : [options.inheritFd];
    const child = spawn(cmd, args, {
      stdio: ['pipe', 'pipe', 'pipe', ...extra],
    }) as ChildProcessWithoutNullStreams;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    // A command that exits before reading all of its input closes the pipe;
    // its exit status reports what went wrong, not the EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    child.on('error', (cause) => {
      clearTimeout(timer);
      reject(failure(argv, `cannot start: ${cause.message}`, { cause }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) return resolve({ stdout, stderr });
      const why = timedOut ? 'timed out' : signal !== null ? `killed by ${signal}` : `exit ${code}`;
      reject(failure(argv, why, { stderr, exitCode: code ?? -1 }));
    });
  });
}

interface FailureDetail {
  readonly cause?: unknown;
  readonly stderr?: string;
  readonly exitCode?: number;
}

function failure(argv: readonly string[], why: string, detail: FailureDetail): AenvError {
  const command = argv.join(' ');
  const stderr = (detail.stderr ?? '').trim().slice(0, STDERR_HEAD);
  const shown = stderr === '' ? '' : `: ${stderr.split('\n').slice(0, 6).join(' | ')}`;
  return new AenvError('NET_COMMAND_FAILED', `${command.slice(0, 200)} failed (${why})${shown}`, {
    cause: detail.cause,
    fields: { command: command.slice(0, 500), exitCode: detail.exitCode, stderr },
  });
}
