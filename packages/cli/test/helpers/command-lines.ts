/**
 * The non-empty output lines of a host command, or none when it fails or
 * is missing: how the VM suites look for leftovers (`pgrep`, `ip netns`,
 * `ip link`, `nft`).
 *
 * @module
 */
import { execFileSync } from 'node:child_process';

/** `cmd args`'s non-empty stdout lines; `[]` when it fails. */
export function commandLines(cmd: string, args: string[]): string[] {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l !== '');
  } catch {
    return [];
  }
}
