/**
 * Removes what a previous run of the daemon left in `$AENV_HOME/sandboxes`
 * (it was killed before it could stop its VMs): kills each VMM process
 * named by a `run/qemu.pid` file — only if that process's command line
 * still mentions the sandbox directory, so a recycled pid is never hit —
 * then deletes the directory. Sandboxes do not survive a restart yet.
 *
 * @module
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** What was cleaned up. */
export interface LeftoverReport {
  readonly directories: number;
  readonly killed: number;
}

async function vmmPidOf(dir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(join(dir, 'run', 'qemu.pid'), 'utf8')).trim());
    if (!Number.isInteger(pid) || pid <= 1) return undefined;
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
    return cmdline.includes(dir) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills leftover VMM processes and removes every sandbox directory. */
export async function removeLeftoverSandboxes(sandboxesDir: string): Promise<LeftoverReport> {
  let names: string[];
  try {
    names = await readdir(sandboxesDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { directories: 0, killed: 0 };
    throw err;
  }
  let killed = 0;
  for (const name of names) {
    const dir = join(sandboxesDir, name);
    const pid = await vmmPidOf(dir);
    if (pid !== undefined) {
      process.kill(pid, 'SIGKILL');
      for (let i = 0; i < 100 && alive(pid); i++) await sleep(20);
      killed++;
    }
    await rm(dir, { recursive: true, force: true });
  }
  return { directories: names.length, killed };
}
