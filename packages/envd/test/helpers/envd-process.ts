/**
 * Runs envd as its own process (the bundle, else the compiled entry point)
 * inside a fixture's world, for tests that need its process (bundle checks,
 * memory measurements).
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

/** A running envd process. */
export interface EnvdProcess {
  readonly child: ChildProcess;
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts `node <entry> --port 0 ...` with `cwd` and waits for its "listening" line. */
export async function spawnEnvd(
  entry: string,
  dir: string,
  cwd: string,
  extra: string[] = [],
): Promise<EnvdProcess> {
  const child = spawn(
    process.execPath,
    [
      entry,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--root',
      dir,
      '--passwd',
      join(dir, 'etc/passwd'),
      '--group',
      join(dir, 'etc/group'),
      ...extra,
    ],
    {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stderr });
      const timer = setTimeout(() => reject(new Error('envd did not start within 15 s')), 15_000);
      lines.on('line', (line) => {
        const parsed = JSON.parse(line) as { msg?: string; port?: number };
        if (parsed.msg === 'envd listening' && parsed.port !== undefined) {
          clearTimeout(timer);
          resolve(parsed.port);
        }
      });
      child.once('exit', (code) => reject(new Error(`envd exited with ${code}`)));
    });
    return { child, url: `http://127.0.0.1:${port}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Resident set size of a process in bytes (Linux). */
export async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kb ?? 0) * 1024;
}
