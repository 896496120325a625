/**
 * `aenv exec ID -- COMMAND [ARG...]`: runs a command in a sandbox, streams
 * its stdout and stderr here as they come (bytes untouched), and exits
 * with the command's exit status. `-i` forwards this process's stdin.
 *
 * @module
 */
import type { CommandHandle } from '@aenv/sdk';
import { flag, keyValues, listOption, stringOption } from '../args.js';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import { parseDuration } from '../output/durations.js';
import { exitStatusOf } from '../terminal/exit-status.js';
import { commandLine } from '../terminal/shell-quote.js';

/** Sends this process's stdin to the command, in order, then EOF; returns the stopper. */
function forwardStdin(ctx: CliContext, handle: CommandHandle): () => void {
  let chain = Promise.resolve();
  const onData = (chunk: Buffer): void => {
    chain = chain.then(() => handle.sendStdin(chunk)).catch(() => undefined);
  };
  const onEnd = (): void => {
    chain = chain.then(() => handle.closeStdin()).catch(() => undefined);
  };
  ctx.stdin.on('data', onData);
  ctx.stdin.on('end', onEnd);
  ctx.stdin.resume();
  return () => {
    ctx.stdin.off('data', onData);
    ctx.stdin.off('end', onEnd);
    ctx.stdin.pause();
  };
}

/** The command. */
export const execCommand: CommandSpec = {
  name: 'exec',
  summary: 'Run a command in a sandbox.',
  usage: 'exec [options] ID -- COMMAND [ARG...]',
  description:
    'Runs COMMAND with bash -l -c in sandbox ID (a paused sandbox is resumed first), streaming its ' +
    'output, and exits with its exit status. Several words are quoted so that bash sees the same ' +
    'words; a single word is given to bash as is, so it may use pipes and variables.',
  operands: ['sandbox'],
  rest: true,
  options: [
    {
      name: 'interactive',
      short: 'i',
      type: 'boolean',
      help: "forward this process's stdin to the command",
    },
    {
      name: 'env',
      short: 'e',
      type: 'string',
      multiple: true,
      value: 'K=V',
      help: 'environment variable (repeatable)',
    },
    { name: 'cwd', short: 'w', type: 'string', value: 'DIR', help: 'working directory' },
    { name: 'user', short: 'u', type: 'string', value: 'USER', help: 'user to run as' },
    {
      name: 'timeout',
      short: 't',
      type: 'string',
      value: 'DURATION',
      help: 'kill the command after this long (default: never)',
    },
  ],
  examples: [
    'aenv exec 4kq2m9x8a1b2c3d4e5f6 -- uname -a',
    "aenv exec 4kq2m9x8a1b2c3d4e5f6 -- 'ls $HOME | wc -l'",
    'echo hello | aenv exec -i 4kq2m9x8a1b2c3d4e5f6 -- cat',
  ],
  async run(ctx, args) {
    const [id, ...words] = [...args.positionals, ...args.rest];
    if (id === undefined) throw new UsageError('expected a sandbox ID and a command');
    if (words.length === 0) throw new UsageError(`expected a command: aenv exec ${id} -- COMMAND`);
    const timeout = stringOption(args, 'timeout');
    const cwd = stringOption(args, 'cwd');
    const user = stringOption(args, 'user');
    const interactive = flag(args, 'interactive');
    const client = await ctx.client();
    const sandbox = await client.sandboxes.connect(id);
    const handle = await sandbox.commands.run(commandLine(words), {
      background: true,
      collect: false,
      stdin: interactive,
      timeoutMs: timeout === undefined ? 0 : parseDuration(timeout, 'timeout'),
      envs: keyValues(listOption(args, 'env'), 'env'),
      ...(cwd === undefined ? {} : { cwd }),
      ...(user === undefined ? {} : { user }),
      onOutput: (stream, bytes) => (stream === 'stderr' ? ctx.stderr : ctx.stdout).write(bytes),
    });
    const stopInput = interactive ? forwardStdin(ctx, handle) : undefined;
    try {
      return exitStatusOf(await handle.result());
    } finally {
      stopInput?.();
    }
  },
};
