/**
 * The per-prefix lock of a node's slot manager.
 *
 * A manager holds an exclusive `flock` on `<lockDir>/<prefix>.lock` for its
 * whole life, and every command it spawns inherits the locked file
 * descriptor (as fd 3). A flock belongs to the open file, not to a process,
 * so the lock stays held while any of those commands still runs. That
 * covers what a crash leaves running: when a daemon is killed with
 * `kill -9`, an `ip -batch` it started goes on creating namespaces; the
 * restarted manager's reclaim must not start until it is done, and it does
 * not, because it cannot take the lock before then. The same lock keeps two
 * live managers from sharing a prefix.
 *
 * Node has no flock(2); `flock(1)` locks the inherited descriptor on its
 * behalf (`flock -x -w <s> 3`), and the lock outlives it because the manager
 * keeps the file open.
 *
 * @module
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { AenvError } from '@aenv/shared';

/** How long `acquire` waits by default: longer than any command may run. */
export const DEFAULT_LOCK_WAIT_MS = 40_000;

/** An exclusive lock on one node prefix. */
export class PrefixLock {
  readonly path: string;
  #fd: number | undefined;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.#fd = fd;
  }

  /**
   * Takes the lock, waiting while another holder (a live manager, or
   * commands a killed one left running) has it.
   * @throws {AenvError} `NET_PREFIX_IN_USE` when it is still held after `waitMs`;
   *   `NET_COMMAND_FAILED` when `flock` cannot run.
   */
  static async acquire(
    dir: string,
    prefix: string,
    waitMs = DEFAULT_LOCK_WAIT_MS,
  ): Promise<PrefixLock> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${prefix}.lock`);
    const fd = openSync(path, 'a', 0o600);
    try {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      const code = await flock(['-x', '-w', String(seconds), '3'], fd);
      if (code === 1) {
        throw new AenvError(
          'NET_PREFIX_IN_USE',
          `another slot manager (or commands a killed one left running) holds ${path}`,
          { fields: { path, prefix } },
        );
      }
      if (code !== 0) {
        throw new AenvError('NET_COMMAND_FAILED', `flock ${path} failed (exit ${code})`, {
          fields: { path },
        });
      }
      return new PrefixLock(path, fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** The locked descriptor, for commands to inherit; `undefined` once released. */
  get fd(): number | undefined {
    return this.#fd;
  }

  /** Closes the file, which releases the lock once no spawned command holds it. Idempotent. */
  release(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}

function flock(args: readonly string[], fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', args, { stdio: ['ignore', 'ignore', 'ignore', fd] });
    child.once('error', (cause) =>
      reject(new AenvError('NET_COMMAND_FAILED', `cannot run flock: ${cause.message}`, { cause })),
    );
    child.once('close', (code) => resolve(code ?? -1));
  });
}
