/**
 * How the CLI reports failures: what failed, why, and what to do, on
 * stderr, with a non-zero exit status (usage errors 2, others 1).
 *
 * ```
 * aenv pause 4kq…: sandbox 4kq… is paused (SBX_INVALID_STATE)
 *   'aenv ls' shows each sandbox's state; 'aenv resume ID' resumes it.
 * ```
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import {
  AenvSdkError,
  AuthenticationError,
  ConnectionError,
  InvalidStateError,
  NotSupportedError,
  ResourceExhaustedError,
  SandboxNotFoundError,
  SnapshotNotFoundError,
  TemplateNotFoundError,
  TimeoutError,
} from '@aenv/sdk';

/** A wrong command line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure the CLI explains itself, with an optional hint on what to do. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly hint: string | undefined;

  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
  }
}

/** Where the command was going, for hints. */
export interface ErrorScene {
  /** The command's name (`pause`, `template ls`). */
  readonly command?: string;
  /** The node URL, when the command talks to one. */
  readonly url?: string;
}

/** The hint for an SDK error: what to do next. */
export function hintFor(err: AenvSdkError, scene: ErrorScene): string | undefined {
  const url = scene.url ?? 'the node';
  if (err instanceof ConnectionError) {
    return `Is the node running? Start one with 'aenv server', or point at another with --url or 'aenv auth login --url URL'.`;
  }
  if (err instanceof AuthenticationError) {
    return `Give ${url} its API key: 'aenv auth login --key KEY' or --key (a node keeps its key in $AENV_HOME/api-key).`;
  }
  if (err.code === 'TENANT_ADMIN_REQUIRED') {
    return `This needs an admin key (the node's own key in $AENV_HOME/api-key is one); give it with --key.`;
  }
  if (err.code === 'TENANT_NOT_EMPTY') return `Remove the tenant's sandboxes first.`;
  if (err instanceof SandboxNotFoundError) return `'aenv ls' lists the sandboxes.`;
  if (err instanceof TemplateNotFoundError) return `'aenv template ls' lists the templates.`;
  if (err instanceof SnapshotNotFoundError) return `'aenv snapshot ls' lists the snapshots.`;
  if (err instanceof InvalidStateError) return `'aenv ls' shows each sandbox's state.`;
  if (err instanceof NotSupportedError) {
    return `${url} runs an aenv version without this feature; it comes with a newer node.`;
  }
  if (err instanceof ResourceExhaustedError) {
    return `Retry later, or remove sandboxes you no longer need ('aenv ls', 'aenv rm ID').`;
  }
  if (err instanceof TimeoutError) return `The node may be overloaded; retry, or raise --timeout.`;
  return undefined;
}

/** Prints an error the way the CLI does and returns the exit status. */
export function reportError(
  err: unknown,
  write: (s: string) => void,
  scene: ErrorScene = {},
): number {
  const prefix = scene.command === undefined ? 'aenv' : `aenv ${scene.command}`;
  if (err instanceof UsageError) {
    const help = scene.command === undefined ? 'aenv --help' : `aenv ${scene.command} --help`;
    write(`${prefix}: ${err.message}\nRun '${help}' for usage.\n`);
    return 2;
  }
  if (err instanceof CliError) {
    write(`${prefix}: ${err.message}\n${err.hint === undefined ? '' : `  ${err.hint}\n`}`);
    return 1;
  }
  if (err instanceof AenvSdkError) {
    const hint = hintFor(err, scene);
    write(`${prefix}: ${err.message} (${err.code})\n${hint === undefined ? '' : `  ${hint}\n`}`);
    return 1;
  }
  if (err instanceof AenvError) {
    write(`${prefix}: ${err.message} (${err.code})\n`);
    return 1;
  }
  write(`${prefix}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 1;
}
