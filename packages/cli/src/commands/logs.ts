/**
 * `aenv logs ID`: the tail of a sandbox's VM console (kernel and init
 * messages of its current machine).
 *
 * @module
 */
import { expectOperands, stringOption } from '../args.js';
import { UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';

/** The command. */
export const logsCommand: CommandSpec = {
  name: 'logs',
  summary: "Show a sandbox's VM console.",
  usage: 'logs [options] ID',
  description:
    "Prints the last lines of the sandbox's serial console: the guest kernel and init. A paused " +
    'sandbox has no console (its machine is gone); it starts again on resume.',
  operands: ['sandbox'],
  options: [
    {
      name: 'lines',
      short: 'n',
      type: 'string',
      value: 'N',
      help: 'how many last lines (default 200)',
    },
  ],
  examples: ['aenv logs 4kq2m9x8a1b2c3d4e5f6', 'aenv logs -n 20 4kq2m9x8a1b2c3d4e5f6'],
  async run(ctx, args) {
    const [id] = expectOperands(args, ['ID']);
    const linesText = stringOption(args, 'lines');
    const lines = linesText === undefined ? undefined : Number(linesText);
    if (lines !== undefined && (!Number.isInteger(lines) || lines < 1)) {
      throw new UsageError(`--lines expects a positive integer (got '${linesText ?? ''}')`);
    }
    const client = await ctx.client();
    const text = await client.sandboxes.logs(id ?? '', lines === undefined ? {} : { lines });
    if (text === '')
      ctx.err(`aenv logs: no console output (a paused sandbox has none until it resumes)`);
    else ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    return 0;
  },
};
