/**
 * Test fixture: an envd on an ephemeral loopback port whose world is a fresh
 * temporary directory (its root), with its own passwd/group files: `root`
 * and an unprivileged `user` (uid 4242, groups 4242 and 4343) whose home is
 * inside the directory. Gives e2b SDK sandboxes that talk to it directly.
 *
 * Everything the fixture creates lives in the directory; `close()` kills
 * what envd started and removes the directory.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sandbox } from 'e2b';
import { ENVD_BUNDLE_DIR, startEnvd, type EnvdHandle, type EnvdOptions } from '../../src/index.js';

/** Whether the tests run as root (needed to run processes as another user). */
export const IS_ROOT = process.getuid?.() === 0;
/** The uid/gid of the fixture's `user` (the current ones when not root). */
export const USER_UID = IS_ROOT ? 4242 : (process.getuid?.() ?? 0);
export const USER_GID = IS_ROOT ? 4242 : (process.getgid?.() ?? 0);
/** A supplementary group of `user`. */
export const EXTRA_GID = 4343;

/** A running envd and its world. */
export interface EnvdFixture {
  /** The temporary directory (envd's root). */
  readonly dir: string;
  /** The home of `user`. */
  readonly home: string;
  readonly envd: EnvdHandle;
  readonly url: string;
  /** An SDK sandbox in debug mode (envd version 99.99.99, no token). */
  sandbox(): Promise<Sandbox>;
  /** An SDK sandbox as the control plane would return it (version and token given). */
  sandboxWith(opts: { envdVersion: string; envdAccessToken?: string }): Sandbox;
  close(): Promise<void>;
}

/**
 * The SDK's constructor is internal (what `Sandbox.connect` uses with the
 * control plane's answer); tests call it to pass a version and a token.
 */
const SandboxWithOptions = Sandbox as unknown as new (opts: Record<string, unknown>) => Sandbox;

/** The run-as-user helper: the bundle's, else compiled into `dir`. */
function execHelper(dir: string): string | undefined {
  const bundled = join(ENVD_BUNDLE_DIR, 'envd-exec');
  if (existsSync(bundled)) return bundled;
  const out = join(dir, 'envd-exec');
  const source = join(ENVD_BUNDLE_DIR, '..', 'native', 'envd-exec.c');
  try {
    execFileSync('cc', ['-O2', '-o', out, source], { stdio: 'ignore' });
    return out;
  } catch {
    return undefined;
  }
}

function writeAccounts(dir: string, home: string): void {
  mkdirSync(join(dir, 'etc'));
  mkdirSync(join(dir, 'root'));
  mkdirSync(home, { recursive: true });
  if (IS_ROOT) chownSync(home, USER_UID, USER_GID);
  writeFileSync(
    join(dir, 'etc', 'passwd'),
    `root:x:0:0:root:${join(dir, 'root')}:/bin/bash\nuser:x:${USER_UID}:${USER_GID}::${home}:/bin/bash\n`,
  );
  writeFileSync(
    join(dir, 'etc', 'group'),
    `root:x:0:\nuser:x:${USER_GID}:\nextra:x:${EXTRA_GID}:user\n`,
  );
}

/** Starts an envd in a fresh temporary world. */
export async function startFixture(options: EnvdOptions = {}): Promise<EnvdFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'envd-test-'));
  chmodSync(dir, 0o755); // `user` must reach its home inside
  const home = join(dir, 'home', 'user');
  writeAccounts(dir, home);
  let envd: EnvdHandle;
  try {
    envd = await startEnvd({
      port: 0,
      host: '127.0.0.1',
      root: dir,
      passwdFile: join(dir, 'etc', 'passwd'),
      groupFile: join(dir, 'etc', 'group'),
      execHelper: execHelper(dir) ?? null,
      logger: null,
      ...options,
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const sandboxWith = (opts: { envdVersion: string; envdAccessToken?: string }): Sandbox =>
    new SandboxWithOptions({
      sandboxId: 'test_sandbox',
      debug: true,
      sandboxUrl: envd.url,
      apiKey: 'e2b_00',
      ...opts,
    });
  return {
    dir,
    home,
    envd,
    url: envd.url,
    sandbox: () => Sandbox.create({ debug: true, sandboxUrl: envd.url }),
    sandboxWith,
    async close() {
      await envd.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves when `predicate` holds, polling; rejects after `ms`. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  ms = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether a process exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
