/**
 * Starts a process with pipes for stdin, stdout and stderr.
 *
 * The process leads its own session (`detached`), so signals reach the whole
 * group it starts. Run-as-user: when envd is root and the user is not, the
 * process is started through the exec helper (`envd-exec`, a small static C
 * program in the bundle) that sets the user's supplementary groups, gid and
 * uid and then execs the command; Node's own `uid`/`gid` spawn options would
 * drop the supplementary groups. Without the helper, those options are used.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { AenvError } from '@aenv/shared';
import { exitInfo } from './exit-status.js';
import type { ExitInfo, OutputKind, ProcessHandle, SpawnSpec } from './process-handle.js';

/** How long output may still arrive after the process exited (grandchildren may hold the pipes). */
const DRAIN_AFTER_EXIT_MS = 100;

/** The argv that runs `spec` as its user, or undefined when no switch is needed. */
function switchUserArgv(spec: SpawnSpec, helper: string | undefined): string[] | undefined {
  if (helper === undefined || process.getuid?.() !== 0 || spec.user.uid === 0) return undefined;
  const { uid, gid, groups } = spec.user;
  return [helper, String(uid), String(gid), groups.join(','), '--', spec.cmd, ...spec.args];
}

class PipeProcess implements ProcessHandle {
  readonly pid: number;
  readonly #child: ChildProcess;
  #inputOpen: boolean;
  #outputListener: (kind: OutputKind, data: Buffer) => void = () => {};
  #exitListener: (exit: ExitInfo) => void = () => {};
  #exit: ExitInfo | undefined;
  #drainTimer: NodeJS.Timeout | undefined;
  #paused = false;
  #finished = false;
  #outputSeq = 0;

  constructor(child: ChildProcess, pid: number, stdin: boolean) {
    this.#child = child;
    this.pid = pid;
    this.#inputOpen = stdin;
    child.stdin?.on('error', () => (this.#inputOpen = false));
    for (const kind of ['stdout', 'stderr'] as const) {
      child[kind]?.on('data', (data: Buffer) => {
        this.#outputSeq++;
        this.#outputListener(kind, data);
        this.#armDrain();
      });
    }
    child.on('exit', (code, signal) => {
      this.#exit = exitInfo(code, signal);
      this.#armDrain();
    });
    child.on('close', () => this.#finish());
  }

  /**
   * After exit, ends once no output arrived for a while (pipes may never
   * close). The end waits for one more poll of the event loop after the
   * timer (`setImmediate` runs after it): on a starved CPU the timer can
   * fire before the loop read output that was already in the pipe when the
   * process exited, and ending then lost the last lines (bench/load.mjs saw
   * 1 stream in 239 miss its last line on an overloaded TCG host).
   */
  #armDrain(): void {
    if (this.#exit === undefined || this.#finished) return;
    clearTimeout(this.#drainTimer);
    if (this.#paused) return;
    this.#drainTimer = setTimeout(() => {
      const seq = this.#outputSeq;
      setImmediate(() => {
        if (this.#outputSeq === seq && !this.#paused) this.#finish();
      });
    }, DRAIN_AFTER_EXIT_MS);
  }

  #finish(): void {
    if (this.#finished || this.#exit === undefined) return;
    this.#finished = true;
    clearTimeout(this.#drainTimer);
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
    this.#child.stdin?.destroy();
    this.#inputOpen = false;
    this.#exitListener(this.#exit);
  }

  onOutput(listener: (kind: OutputKind, data: Buffer) => void): void {
    this.#outputListener = listener;
  }

  onExit(listener: (exit: ExitInfo) => void): void {
    this.#exitListener = listener;
  }

  pause(): void {
    this.#paused = true;
    this.#child.stdout?.pause();
    this.#child.stderr?.pause();
    clearTimeout(this.#drainTimer);
  }

  resume(): void {
    this.#paused = false;
    this.#child.stdout?.resume();
    this.#child.stderr?.resume();
    this.#armDrain();
  }

  get inputOpen(): boolean {
    return this.#inputOpen && this.#child.stdin?.writable === true;
  }

  write(data: Uint8Array): void {
    this.#child.stdin?.write(data);
  }

  closeInput(): void {
    this.#inputOpen = false;
    this.#child.stdin?.end();
  }

  kill(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      this.#child.kill(signal);
    }
  }
}

/**
 * Starts `spec` with pipes.
 * @throws {AenvError} `ENVD_SPAWN_FAILED` when the process cannot start.
 */
export async function spawnPipes(spec: SpawnSpec, execHelper?: string): Promise<ProcessHandle> {
  const argv = switchUserArgv(spec, execHelper);
  const asSelf = process.getuid?.() !== 0 || spec.user.uid === 0 || argv !== undefined;
  const [file, ...args] = argv ?? [spec.cmd, ...spec.args];
  const child = spawn(file ?? spec.cmd, args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: [spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: true,
    ...(asSelf ? {} : { uid: spec.user.uid, gid: spec.user.gid }),
  });
  const pid = child.pid;
  if (pid === undefined) {
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new AenvError(
      'ENVD_SPAWN_FAILED',
      `error starting process '${spec.cmd}': ${err.message}`,
      {
        cause: err,
        fields: { cmd: spec.cmd },
      },
    );
  }
  child.on('error', () => {});
  return new PipeProcess(child, pid, spec.stdin);
}
