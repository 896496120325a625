/**
 * `StepRunner`: runs a template's steps in its build machine through envd
 * and keeps the build's state — environment (the image's `Env` plus ENV
 * steps), build arguments (ARG, not kept in the template), the current user
 * and working directory — which becomes the template's defaults.
 *
 * - RUN: `bash -c` when the image has bash, else `sh -c`, as the step's
 *   user or the current one, in the working directory, with the environment
 *   and arguments; output goes to the build log line by line; a non-zero exit
 *   fails the step.
 * - WORKDIR: relative to the current one; created (as root) if missing.
 * - USER: a numeric uid is looked up in `/etc/passwd`; a missing name is
 *   created with `useradd` (or busybox `adduser`).
 * - COPY: `copy-step.ts`. ENV, ARG: `$VAR` expansion as in Dockerfiles.
 * - The start command runs in the background (it must keep running); the
 *   ready command is retried every second until it exits 0.
 *
 * @module
 */
import { posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';
import type { GuestAddress } from '../orchestrator/sandbox.js';
import { expandVars, type BuildStep, type CopySource } from './build-spec.js';
import { copyIntoMachine, type GuestNode } from './copy-step.js';
import {
  readGuestFile,
  runGuestCommand,
  startGuestProcess,
  statGuestPath,
  type BackgroundProcess,
  type GuestCommand,
} from './envd-rpc.js';

/** Log levels of build logs (E2B's). */
export type BuildLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The defaults a template gives its sandboxes. */
export interface BuildDefaults {
  readonly envVars: Readonly<Record<string, string>>;
  /** undefined: envd's default (`user` if the image has it, else root). */
  readonly user: string | undefined;
  readonly workdir: string | undefined;
}

/** What a runner needs. */
export interface StepRunnerOptions {
  readonly envd: GuestAddress;
  readonly node: GuestNode;
  readonly stepTimeoutMs: number;
  /** A writable scratch directory of the machine (`/tmp`, a tmpfs in aenv guests). */
  readonly scratchDir?: string;
  /** The archive a COPY step's files are in. */
  readonly files: (source: CopySource) => Promise<string>;
  readonly log: (level: BuildLogLevel, message: string) => void;
}

/** Runs steps and tracks the build state. */
export class StepRunner {
  readonly #o: StepRunnerOptions;
  readonly #env: Record<string, string>;
  readonly #args: Record<string, string> = {};
  #user: string | undefined;
  #workdir: string | undefined;
  #shell: string | undefined;

  constructor(options: StepRunnerOptions, initial: BuildDefaults) {
    this.#o = options;
    this.#env = { ...initial.envVars };
    this.#user = initial.user;
    this.#workdir = initial.workdir;
  }

  /** The state as template defaults. */
  defaults(): BuildDefaults {
    return { envVars: { ...this.#env }, user: this.#user, workdir: this.#workdir };
  }

  /**
   * Runs one step.
   * @throws {AenvError} `BUILD_STEP_FAILED` and what COPY throws.
   */
  async run(step: BuildStep): Promise<void> {
    const vars = { ...this.#env, ...this.#args };
    switch (step.kind) {
      case 'RUN':
        return this.#runShell(step.command, step.user ?? this.#user, '');
      case 'ENV':
        for (const [k, v] of step.vars)
          this.#env[k] = expandVars(v, { ...this.#env, ...this.#args });
        return;
      case 'ARG':
        for (const [k, v] of step.vars) {
          if (v !== undefined) this.#args[k] = expandVars(v, vars);
          else this.#args[k] ??= '';
        }
        return;
      case 'WORKDIR':
        return this.#setWorkdir(expandVars(step.path, vars));
      case 'USER':
        this.#user = await this.#ensureUser(expandVars(step.user, vars));
        return;
      case 'COPY':
        await this.#copy(step, vars);
        return;
      case 'META':
        return;
    }
  }

  /**
   * Starts the start command in the background.
   * @throws {AenvError} `BUILD_STEP_FAILED` when it exits at once.
   */
  async start(command: string): Promise<BackgroundProcess> {
    const shell = await this.#shellPath();
    return startGuestProcess(
      this.#o.envd,
      this.#command(shell, command, this.#user),
      this.#lines('start'),
    );
  }

  /**
   * Runs `command` every second until it succeeds.
   * @throws {AenvError} `BUILD_READY_TIMEOUT`; `BUILD_STEP_FAILED` when `started` ends first.
   */
  async waitReady(
    command: string,
    timeoutMs: number,
    started: BackgroundProcess | undefined,
  ): Promise<void> {
    const shell = await this.#shellPath();
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    void started?.ended.then(
      () => (ended = true),
      () => (ended = true),
    );
    for (let attempt = 1; ; attempt++) {
      const left = deadline - Date.now();
      const end = await runGuestCommand(this.#o.envd, this.#command(shell, command, this.#user), {
        timeoutMs: Math.max(1000, Math.min(left, 60_000)),
      });
      if (end.exitCode === 0) {
        this.#o.log('info', `ready (${command}) after ${attempt} attempt(s)`);
        return;
      }
      if (ended)
        throw new AenvError(
          'BUILD_STEP_FAILED',
          'the start command exited before the template was ready',
        );
      if (Date.now() + 1000 > deadline) {
        throw new AenvError(
          'BUILD_READY_TIMEOUT',
          `ready command '${command}' did not succeed within ${Math.round(timeoutMs / 1000)} s`,
        );
      }
      await sleep(1000);
    }
  }

  async #runShell(command: string, user: string | undefined, what: string): Promise<void> {
    const shell = await this.#shellPath();
    let tail = '';
    const lines = this.#lines('run');
    const end = await runGuestCommand(this.#o.envd, this.#command(shell, command, user), {
      timeoutMs: this.#o.stepTimeoutMs,
      onOutput: (stream, data) => {
        if (stream === 'stderr') tail = (tail + data.toString('utf8')).slice(-600);
        lines(stream, data);
      },
    });
    if (end.exitCode !== 0) {
      const why = tail.trim() === '' ? end.status : tail.trim().split('\n').slice(-3).join(' | ');
      throw new AenvError('BUILD_STEP_FAILED', `${what}exited with ${end.exitCode}: ${why}`);
    }
  }

  #command(shell: string, command: string, user: string | undefined): GuestCommand {
    return {
      cmd: shell,
      args: ['-c', command],
      envs: { ...this.#env, ...this.#args },
      cwd: this.#workdir,
      user,
    };
  }

  async #shellPath(): Promise<string> {
    if (this.#shell !== undefined) return this.#shell;
    // An envd that refuses the question (a guarded stand-in) gets sh, which every image has.
    const bash = await statGuestPath(this.#o.envd, '/bin/bash').catch(() => undefined);
    this.#shell = bash !== undefined ? '/bin/bash' : '/bin/sh';
    return this.#shell;
  }

  async #setWorkdir(path: string): Promise<void> {
    const dir = posix.resolve(this.#workdir ?? '/', path);
    const found = await statGuestPath(this.#o.envd, dir);
    if (found === undefined) {
      const end = await runGuestCommand(
        this.#o.envd,
        {
          cmd: this.#o.node.cmd,
          args: [
            ...this.#o.node.args,
            '-e',
            'require("fs").mkdirSync(process.argv[1], { recursive: true })',
            dir,
          ],
          envs: {},
          user: 'root',
          cwd: this.#o.scratchDir ?? '/tmp',
        },
        { timeoutMs: 60_000 },
      );
      if (end.exitCode !== 0)
        throw new AenvError('BUILD_STEP_FAILED', `WORKDIR ${dir}: cannot create it`);
    } else if (found.type === 'FILE_TYPE_FILE') {
      throw new AenvError('BUILD_STEP_FAILED', `WORKDIR ${dir} exists and is not a directory`);
    }
    this.#workdir = dir;
  }

  /** The user name envd will run as: numeric ids looked up, missing names created. */
  async #ensureUser(spec: string): Promise<string> {
    const name = spec.split(':')[0] as string;
    const passwd = (await readGuestFile(this.#o.envd, '/etc/passwd'))?.toString('utf8') ?? '';
    const entries = passwd.split('\n').map((l) => l.split(':'));
    if (/^\d+$/.test(name)) {
      const found = entries.find((f) => f[2] === name)?.[0];
      if (found === undefined)
        throw new AenvError('BUILD_STEP_FAILED', `USER ${spec}: no user has uid ${name}`);
      return found;
    }
    if (entries.some((f) => f[0] === name)) return name;
    this.#o.log('info', `creating user ${name}`);
    const quoted = `'${name.replace(/'/g, '')}'`;
    await this.#runShell(
      `useradd -m -s /bin/sh ${quoted} 2>/dev/null || adduser -D ${quoted}`,
      'root',
      `creating user ${name}: `,
    );
    return name;
  }

  async #copy(
    step: Extract<BuildStep, { kind: 'COPY' }>,
    vars: Record<string, string>,
  ): Promise<void> {
    const destRaw = expandVars(step.dest, vars);
    const dest = posix.resolve(this.#workdir ?? '/', destRaw) + (destRaw.endsWith('/') ? '/' : '');
    const archive = await this.#o.files(step.source);
    const owner = step.user !== undefined ? expandVars(step.user, vars) : (this.#user ?? 'root');
    const count = await copyIntoMachine({
      envd: this.#o.envd,
      node: this.#o.node,
      archive,
      src: expandVars(step.src, vars),
      dest,
      owner,
      mode: step.mode,
      timeoutMs: this.#o.stepTimeoutMs,
      scratchDir: this.#o.scratchDir ?? '/tmp',
    });
    this.#o.log('info', `copied ${count} entries to ${dest}`);
  }

  /** Turns output chunks into log lines. */
  #lines(prefix: string): (stream: 'stdout' | 'stderr', data: Buffer) => void {
    const pending = { stdout: '', stderr: '' };
    return (stream, data) => {
      const text = pending[stream] + data.toString('utf8');
      const parts = text.split('\n');
      pending[stream] = (parts.pop() ?? '').slice(-4000);
      for (const line of parts)
        this.#o.log(stream === 'stderr' ? 'warn' : 'info', `[${prefix}] ${line.slice(0, 2000)}`);
    };
  }
}
