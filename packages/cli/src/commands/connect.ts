/**
 * `aenv connect ID`: an interactive shell in a running (or paused: it is
 * resumed) sandbox, on this terminal, following its size.
 *
 * @module
 */
import { expectOperands, stringOption } from '../args.js';
import type { CommandSpec } from '../command-spec.js';
import { attachShell } from '../terminal/attach-shell.js';

/** The command. */
export const connectCommand: CommandSpec = {
  name: 'connect',
  summary: 'Open a shell in a sandbox.',
  usage: 'connect [options] ID',
  description:
    "Opens an interactive login shell (a pseudo-terminal of this terminal's size) in sandbox ID; a " +
    "paused sandbox is resumed first. Exits with the shell's exit status.",
  operands: ['sandbox'],
  options: [
    {
      name: 'user',
      short: 'u',
      type: 'string',
      value: 'USER',
      help: 'user to run the shell as (default: the sandbox default)',
    },
    { name: 'cwd', short: 'w', type: 'string', value: 'DIR', help: 'working directory' },
  ],
  examples: ['aenv connect 4kq2m9x8a1b2c3d4e5f6', 'aenv connect --user root 4kq2m9x8a1b2c3d4e5f6'],
  async run(ctx, args) {
    const [id] = expectOperands(args, ['ID']);
    const client = await ctx.client();
    const sandbox = await client.sandboxes.connect(id ?? '');
    return attachShell(ctx, sandbox, {
      user: stringOption(args, 'user'),
      cwd: stringOption(args, 'cwd'),
    });
  },
};
