/**
 * `aenv start [TEMPLATE]`: creates a sandbox and attaches a shell to it
 * (removed when the shell exits, unless `--keep`), or with `--detach`
 * prints its id and returns.
 *
 * @module
 */
import { flag, keyValues, listOption, stringOption } from '../args.js';
import { UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import { parseDuration } from '../output/durations.js';
import { attachShell } from '../terminal/attach-shell.js';

/** The command. */
export const startCommand: CommandSpec = {
  name: 'start',
  summary: 'Create a sandbox and open a shell in it (or --detach).',
  usage: 'start [options] [TEMPLATE]',
  description:
    'Creates a sandbox from TEMPLATE (default: base) or a snapshot id. Without --detach it opens an ' +
    'interactive shell and removes the sandbox when the shell exits (keep it with --keep); with ' +
    '--detach it prints the sandbox id.',
  operands: ['template'],
  options: [
    { name: 'detach', short: 'd', type: 'boolean', help: 'print the id and return' },
    {
      name: 'timeout',
      short: 't',
      type: 'string',
      value: 'DURATION',
      help: 'time to live (e.g. 300, 10m, 2h; default: the node default, 5m)',
    },
    {
      name: 'on-timeout',
      type: 'string',
      value: 'ACTION',
      choices: ['pause', 'kill'],
      help: 'what the expiry does (default: the node default, pause)',
    },
    {
      name: 'env',
      short: 'e',
      type: 'string',
      multiple: true,
      value: 'K=V',
      help: 'environment variable of every process (repeatable)',
    },
    {
      name: 'metadata',
      short: 'm',
      type: 'string',
      multiple: true,
      value: 'K=V',
      help: 'metadata (repeatable)',
    },
    { name: 'keep', type: 'boolean', help: 'keep the sandbox when the shell exits' },
  ],
  examples: [
    '# a shell in a new sandbox, removed on exit',
    'aenv start',
    '# a sandbox for an hour, in the background',
    'ID=$(aenv start --detach --timeout 1h base)',
  ],
  async run(ctx, args) {
    const [template = 'base', ...extra] = args.positionals;
    if (extra.length > 0) throw new UsageError(`unexpected '${extra[0] ?? ''}'`);
    const timeout = stringOption(args, 'timeout');
    const onTimeout = stringOption(args, 'on-timeout') as 'pause' | 'kill' | undefined;
    const client = await ctx.client();
    const sandbox = await client.sandboxes.create(template, {
      ...(timeout === undefined ? {} : { timeoutMs: parseDuration(timeout, 'timeout') }),
      ...(onTimeout === undefined ? {} : { onTimeout }),
      envs: keyValues(listOption(args, 'env'), 'env'),
      metadata: keyValues(listOption(args, 'metadata'), 'metadata'),
    });
    if (flag(args, 'detach')) {
      ctx.out(sandbox.sandboxId);
      return 0;
    }
    ctx.err(`aenv: sandbox ${sandbox.sandboxId} started`);
    try {
      return await attachShell(ctx, sandbox);
    } finally {
      if (flag(args, 'keep')) {
        ctx.err(
          `aenv: sandbox ${sandbox.sandboxId} keeps running ('aenv connect ${sandbox.sandboxId}')`,
        );
      } else {
        await sandbox.kill();
        ctx.err(`aenv: sandbox ${sandbox.sandboxId} removed`);
      }
    }
  },
};
