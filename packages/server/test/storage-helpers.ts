/**
 * Helpers of the storage suites: QEMU's own NBD client (`qemu-io`) as the
 * disk's user, failing loudly on a pattern mismatch, and the skip reason
 * when QEMU's tools are missing.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Why storage suites that need qemu-io are skipped, or `undefined`. */
export const qemuMissing: string | undefined = await exec('qemu-io', ['--version']).then(
  () => undefined,
  () => 'qemu-io is not installed (scripts/apt-packages.txt: qemu-utils)',
);

/**
 * Runs `qemu-io` commands (`read -P 0xab 0 64k`, `write ...`, `flush`) on an
 * `nbd+unix://` URI; throws when one fails or a read pattern does not match.
 */
export async function runQemuIo(uri: string, commands: readonly string[]): Promise<string> {
  const args = ['-f', 'raw', ...commands.flatMap((c) => ['-c', c]), uri];
  const { stdout, stderr } = await exec('qemu-io', args, { timeout: 60_000 });
  const out = `${stdout}${stderr}`;
  if (/Pattern verification failed|failed:|error/i.test(out)) {
    throw new Error(`qemu-io ${commands.join('; ')}: ${out}`);
  }
  return out;
}
