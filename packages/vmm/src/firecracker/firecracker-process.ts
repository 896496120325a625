/**
 * The Firecracker child process: its command line (pure, tested beside),
 * spawning it with the drive descriptors it inherits, noticing its end and
 * keeping the tail of its stderr for error messages. Its stdout is the
 * guest's serial console (Firecracker writes the emulated UART there).
 *
 * Contract: `exited` always resolves (never rejects), also when the spawn
 * itself failed (then `deathReason()` says why); `kill` is safe at any time.
 * The wrappers (`setpriv`, `nsenter`, the jailer) exec rather than fork, so
 * the child's pid is Firecracker's.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { jailId, jailerArgs, type JailerOptions, type VmmLayout } from './vmm-layout.js';

/** How the process ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What {@link firecrackerCommand} needs. */
export interface CommandSpec {
  readonly firecracker: string;
  readonly id: string;
  readonly layout: VmmLayout;
  /** Network namespace: a name under /run/netns or an absolute path. */
  readonly netns?: string;
  /** Run under the jailer (the layout must be a jail). */
  readonly jailer?: JailerOptions;
  /** Kill Firecracker when the spawning process dies (`setpriv --pdeathsig`). */
  readonly killWithParent: boolean;
}

/** `/run/netns/<name>` for a name, the path itself for a path. */
export function netnsPath(netns: string): string {
  return netns.startsWith('/') ? netns : `/run/netns/${netns}`;
}

/**
 * The program and arguments that run Firecracker. Without the jailer:
 * `[setpriv --pdeathsig SIGKILL --] [nsenter --net=<ns> --] firecracker
 * --api-sock <sock> --id <id>`; with it: `[setpriv ...] jailer <jailer
 * args> -- --api-sock /run/firecracker.socket` (the jailer adds `--id`).
 * Note that the jailer's switch to `uid:gid` clears the parent-death
 * signal, so a jailed VMM outlives a crashed daemon.
 */
export function firecrackerCommand(spec: CommandSpec): [string, string[]] {
  let argv: string[];
  if (spec.jailer !== undefined) {
    const ns = spec.netns === undefined ? undefined : netnsPath(spec.netns);
    argv = [
      spec.jailer.binary,
      ...jailerArgs(spec.jailer, spec.firecracker, spec.id, ns),
      '--',
      '--api-sock',
      spec.layout.apiSocket.vmm,
    ];
  } else {
    argv = [spec.firecracker, '--api-sock', spec.layout.apiSocket.vmm, '--id', jailId(spec.id)];
    if (spec.netns !== undefined)
      argv = ['nsenter', `--net=${netnsPath(spec.netns)}`, '--', ...argv];
  }
  if (spec.killWithParent) argv = ['setpriv', '--pdeathsig', 'SIGKILL', '--', ...argv];
  return [argv[0] as string, argv.slice(1)];
}

const STDERR_TAIL = 4096;

/** See the module comment. */
export class FirecrackerProcess {
  readonly #child: ChildProcess;
  readonly exited: Promise<ProcessExit>;
  #exit: ProcessExit | undefined;
  #stderr = '';
  #spawnError: string | undefined;

  private constructor(program: string, args: readonly string[], fds: readonly number[]) {
    this.#child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe', ...fds] });
    this.#child.stderr?.setEncoding('utf8');
    this.#child.stderr?.on('data', (s: string) => {
      this.#stderr = (this.#stderr + s).slice(-STDERR_TAIL);
    });
    this.exited = new Promise<ProcessExit>((resolve) => {
      this.#child.once('error', (err) => {
        this.#spawnError = err.message;
        // 'close' does not follow a failed spawn
        if (this.#child.pid === undefined) this.#settle(resolve, { code: null, signal: null });
      });
      // 'close' (not 'exit'): stdout and stderr are fully read by then
      this.#child.once('close', (code, signal) => this.#settle(resolve, { code, signal }));
    });
  }

  /**
   * Spawns `program args`; `fds` become the child's descriptors 3, 4, ...
   * (the caller may close its copies once this returns).
   */
  static spawn(
    program: string,
    args: readonly string[],
    fds: readonly number[] = [],
  ): FirecrackerProcess {
    return new FirecrackerProcess(program, args, fds);
  }

  #settle(resolve: (e: ProcessExit) => void, exit: ProcessExit): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    resolve(exit);
  }

  /** The guest's serial console output. */
  get stdout(): Readable {
    return this.#child.stdout as Readable;
  }

  /** The pid, once spawned. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** How it ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** A one-line reason the process is gone, or undefined while it runs. */
  deathReason(): string | undefined {
    if (this.#spawnError !== undefined) return `could not start: ${this.#spawnError}`;
    if (this.#exit === undefined) return undefined;
    const how = this.#exit.signal ?? `status ${this.#exit.code}`;
    const err = this.stderrTail().trim();
    return `exited (${how})${err === '' ? '' : `: ${err}`}`;
  }

  /** The end of what the process wrote to stderr. */
  stderrTail(): string {
    return this.#stderr;
  }

  /** Sends a signal if the process still runs. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.#exit === undefined && this.#child.pid !== undefined) this.#child.kill(signal);
  }
}
