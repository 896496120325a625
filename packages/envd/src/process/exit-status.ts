/**
 * Describes a process's end the way E2B's envd does: Go's
 * `ProcessState.String()` (`exit status 1`, `signal: killed`) and
 * `ExitCode()` (-1 for a signal).
 *
 * @module
 */
import { constants } from 'node:os';
import type { ExitInfo } from './process-handle.js';

/** Go's `syscall.Signal.String()` for the common Linux signals. */
const GO_SIGNAL_NAMES: Readonly<Record<string, string>> = {
  SIGHUP: 'hangup',
  SIGINT: 'interrupt',
  SIGQUIT: 'quit',
  SIGILL: 'illegal instruction',
  SIGTRAP: 'trace/breakpoint trap',
  SIGABRT: 'aborted',
  SIGBUS: 'bus error',
  SIGFPE: 'floating point exception',
  SIGKILL: 'killed',
  SIGUSR1: 'user defined signal 1',
  SIGSEGV: 'segmentation fault',
  SIGUSR2: 'user defined signal 2',
  SIGPIPE: 'broken pipe',
  SIGALRM: 'alarm clock',
  SIGTERM: 'terminated',
  SIGSTKFLT: 'stack fault',
  SIGCHLD: 'child exited',
  SIGCONT: 'continued',
  SIGSTOP: 'stopped (signal)',
  SIGTSTP: 'stopped',
  SIGTTIN: 'stopped (tty input)',
  SIGTTOU: 'stopped (tty output)',
  SIGURG: 'urgent I/O condition',
  SIGXCPU: 'CPU time limit exceeded',
  SIGXFSZ: 'file size limit exceeded',
  SIGVTALRM: 'virtual timer expired',
  SIGPROF: 'profiling timer expired',
  SIGWINCH: 'window changed',
  SIGIO: 'I/O possible',
  SIGPWR: 'power failure',
  SIGSYS: 'bad system call',
};

/** The signal name of a signal number (`9` → `SIGKILL`). */
export function signalName(signo: number): string | undefined {
  for (const [name, value] of Object.entries(constants.signals)) if (value === signo) return name;
  return undefined;
}

/** The end event of a process that exited with `code` or died of `signal`. */
export function exitInfo(code: number | null, signal: string | null): ExitInfo {
  if (signal !== null) {
    const status = `signal: ${GO_SIGNAL_NAMES[signal] ?? signal}`;
    return { exitCode: -1, exited: false, status, error: status };
  }
  const exitCode = code ?? 0;
  const status = `exit status ${exitCode}`;
  return exitCode === 0
    ? { exitCode, exited: true, status }
    : { exitCode, exited: true, status, error: status };
}
