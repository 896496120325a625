/**
 * The exit status the CLI takes from a process that ended in a sandbox:
 * its exit code, or 128 + the signal number when a signal ended it (as a
 * shell reports it), so `aenv exec ID -- CMD` exits as CMD did.
 *
 * @module
 */
import type { CommandResult } from '@aenv/sdk';

const SIGNALS: Readonly<Record<string, number>> = {
  hangup: 1,
  interrupt: 2,
  quit: 3,
  aborted: 6,
  killed: 9,
  'segmentation fault': 11,
  'broken pipe': 13,
  terminated: 15,
};

/** The local exit status for a remote result. */
export function exitStatusOf(result: CommandResult): number {
  if (result.exitCode >= 0) return result.exitCode & 0xff;
  const m = /signal: (.+)$/.exec(result.error ?? '');
  const signal = m === null ? undefined : SIGNALS[m[1] ?? ''];
  return signal === undefined ? 1 : 128 + signal;
}
