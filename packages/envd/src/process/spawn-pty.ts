/**
 * Starts a process in a pseudo-terminal, through `node-pty` (a maintained
 * native PTY library; its `pty.node` addon ships in the bundle directory).
 *
 * node-pty's child calls only setgid/setuid, so it would keep envd's own
 * supplementary groups; envd therefore sets its supplementary groups to the
 * user's for the duration of the (synchronous) fork and restores them right
 * after.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type * as NodePty from 'node-pty';
import { exitInfo, signalName } from './exit-status.js';
import type { ExitInfo, OutputKind, ProcessHandle, SpawnSpec } from './process-handle.js';

let nodePty: Promise<typeof NodePty> | undefined;

/**
 * Loads node-pty on first use, so envd starts (and runs pipe processes)
 * even where the native addon cannot load.
 */
async function loadNodePty(): Promise<typeof NodePty> {
  nodePty ??= import('node-pty').then((mod) =>
    'spawn' in mod ? mod : (mod as { default: typeof NodePty }).default,
  );
  try {
    return await nodePty;
  } catch (err) {
    nodePty = undefined;
    throw new AenvError('ENVD_SPAWN_FAILED', `pseudo-terminals are unavailable: ${String(err)}`, {
      cause: err,
    });
  }
}

/** Runs `fork` with envd's supplementary groups set to `groups` (when root). */
function withGroups<T>(groups: readonly number[], fork: () => T): T {
  if (process.getuid?.() !== 0 || process.setgroups === undefined) return fork();
  const saved = process.getgroups?.() ?? [];
  process.setgroups([...groups]);
  try {
    return fork();
  } finally {
    process.setgroups(saved);
  }
}

class PtyProcess implements ProcessHandle {
  readonly pid: number;
  readonly #pty: NodePty.IPty;
  #outputListener: (kind: OutputKind, data: Buffer) => void = () => {};
  #exitListener: (exit: ExitInfo) => void = () => {};
  #exited = false;

  constructor(pty: NodePty.IPty) {
    this.#pty = pty;
    this.pid = pty.pid;
    pty.onData((data: string | Buffer) => {
      this.#outputListener('pty', typeof data === 'string' ? Buffer.from(data) : data);
    });
    pty.onExit(({ exitCode, signal }) => {
      this.#exited = true;
      const name = signal !== undefined && signal > 0 ? (signalName(signal) ?? `${signal}`) : null;
      this.#exitListener(exitInfo(name === null ? exitCode : null, name));
    });
  }

  onOutput(listener: (kind: OutputKind, data: Buffer) => void): void {
    this.#outputListener = listener;
  }

  onExit(listener: (exit: ExitInfo) => void): void {
    this.#exitListener = listener;
  }

  pause(): void {
    this.#pty.pause();
  }

  resume(): void {
    this.#pty.resume();
  }

  get inputOpen(): boolean {
    return !this.#exited;
  }

  write(data: Uint8Array): void {
    this.#pty.write(Buffer.from(data));
  }

  closeInput(): void {
    throw new AenvError(
      'ENVD_PROCESS_INPUT_INVALID',
      'cannot close stdin for PTY process, send Ctrl+D (0x04) instead',
      { fields: { pid: this.pid } },
    );
  }

  resize(cols: number, rows: number): void {
    this.#pty.resize(cols, rows);
  }

  kill(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      this.#pty.kill(signal);
    }
  }
}

/**
 * Starts `spec` in a pseudo-terminal of `spec.pty` size.
 * @throws {AenvError} `ENVD_SPAWN_FAILED`.
 */
export async function spawnPty(spec: SpawnSpec): Promise<ProcessHandle> {
  const size = spec.pty ?? { cols: 80, rows: 24 };
  const pty = await loadNodePty();
  const switchUser = process.getuid?.() === 0 && spec.user.uid !== 0;
  try {
    const term = withGroups(spec.user.groups, () =>
      pty.spawn(spec.cmd, [...spec.args], {
        name: spec.env.TERM ?? 'xterm-256color',
        cols: Math.max(1, size.cols),
        rows: Math.max(1, size.rows),
        cwd: spec.cwd,
        env: { ...spec.env },
        encoding: null,
        ...(switchUser ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
      }),
    );
    return new PtyProcess(term);
  } catch (err) {
    throw new AenvError(
      'ENVD_SPAWN_FAILED',
      `error starting pty with command '${spec.cmd}': ${String(err)}`,
      {
        cause: err,
        fields: { cmd: spec.cmd },
      },
    );
  }
}
