/**
 * `aenv pause|resume|rm ID...` and `aenv inspect ID`: lifecycle operations
 * on sandboxes by id. Each id is tried; those that fail are reported and
 * the command exits 1, the others print their id.
 *
 * @module
 */
import { SandboxNotFoundError, type AenvClient } from '@aenv/sdk';
import { expectOperands, flag, stringOption } from '../args.js';
import type { CliContext } from '../cli-context.js';
import { reportError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import { parseDuration } from '../output/durations.js';

/** Runs `op` for every id; prints the ids that succeeded; 1 when one failed. */
export async function forEachId(
  ctx: CliContext,
  ids: readonly string[],
  op: (client: AenvClient, id: string) => Promise<void>,
): Promise<number> {
  const client = await ctx.client();
  let status = 0;
  for (const id of ids) {
    try {
      await op(client, id);
      ctx.out(id);
    } catch (err) {
      status = reportError(err, (s) => void ctx.stderr.write(s), {
        command: `${ctx.command} ${id}`,
        url: client.config.apiUrl,
      });
    }
  }
  return status;
}

/** `aenv pause`. */
export const pauseCommand: CommandSpec = {
  name: 'pause',
  summary: 'Pause sandboxes (memory and disk kept, no CPU or RAM used).',
  usage: 'pause [options] ID...',
  description:
    "Pauses running sandboxes: each one's memory and disk are saved and its machine is released. " +
    "'aenv resume' (or connect, exec, cp) brings it back where it was.",
  operands: ['sandbox'],
  options: [
    { name: 'disk-only', type: 'boolean', help: 'keep only the disk (resume boots it again)' },
  ],
  examples: ['aenv pause 4kq2m9x8a1b2c3d4e5f6', 'aenv pause $(aenv ls --state running -q)'],
  run(ctx, args) {
    const ids = expectOperands(args, ['ID'], true);
    const keepMemory = !flag(args, 'disk-only');
    return forEachId(ctx, ids, (c, id) => c.sandboxes.pause(id, { keepMemory }));
  },
};

/** `aenv resume`. */
export const resumeCommand: CommandSpec = {
  name: 'resume',
  summary: 'Resume paused sandboxes.',
  usage: 'resume [options] ID...',
  operands: ['sandbox'],
  options: [
    {
      name: 'timeout',
      short: 't',
      type: 'string',
      value: 'DURATION',
      help: 'time to live from now (default: the node default)',
    },
  ],
  examples: [
    'aenv resume 4kq2m9x8a1b2c3d4e5f6',
    'aenv resume --timeout 1h $(aenv ls --state paused -q)',
  ],
  run(ctx, args) {
    const ids = expectOperands(args, ['ID'], true);
    const timeout = stringOption(args, 'timeout');
    const timeoutMs = timeout === undefined ? undefined : parseDuration(timeout, 'timeout');
    return forEachId(ctx, ids, async (c, id) => {
      await c.sandboxes.resume(id, timeoutMs === undefined ? {} : { timeoutMs });
    });
  },
};

/** `aenv rm`. */
export const rmCommand: CommandSpec = {
  name: 'rm',
  summary: 'Remove (kill) sandboxes, running or paused.',
  usage: 'rm [options] ID...',
  operands: ['sandbox'],
  options: [],
  examples: [
    'aenv rm 4kq2m9x8a1b2c3d4e5f6',
    '# every sandbox of the node',
    'aenv rm $(aenv ls -q)',
  ],
  run(ctx, args) {
    const ids = expectOperands(args, ['ID'], true);
    return forEachId(ctx, ids, async (c, id) => {
      if (!(await c.sandboxes.kill(id))) {
        throw new SandboxNotFoundError(`sandbox ${id} not found`);
      }
    });
  },
};

/** `aenv inspect`. */
export const inspectCommand: CommandSpec = {
  name: 'inspect',
  summary: 'Show a sandbox in detail (JSON).',
  usage: 'inspect [options] ID',
  operands: ['sandbox'],
  options: [],
  examples: ['aenv inspect 4kq2m9x8a1b2c3d4e5f6 | jq .endAt'],
  async run(ctx, args) {
    const [id] = expectOperands(args, ['ID']);
    const client = await ctx.client();
    ctx.out(JSON.stringify(await client.sandboxes.get(id ?? ''), null, 2));
    return 0;
  },
};
