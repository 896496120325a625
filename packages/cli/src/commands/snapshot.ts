/**
 * `aenv snapshot create|ls|rm` and `aenv fork ID -n N`: snapshots (a
 * sandbox's memory and disk at one moment, usable as a template) and
 * copy-on-write forks. A node without them answers "not supported yet"
 * (aenv's snapshot work).
 *
 * @module
 */
import type { SnapshotInfo } from '@aenv/sdk';
import { expectOperands, flag, stringOption } from '../args.js';
import { CliError, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import { parseDuration, relativeTime } from '../output/durations.js';
import { LIST_OPTIONS, listFormat, printList, type Column } from '../output/table.js';
import { forEachId } from './lifecycle.js';

const SNAPSHOT_COLUMNS: readonly Column<SnapshotInfo>[] = [
  { header: 'SNAPSHOT ID', cell: (s) => s.snapshotId },
  { header: 'NAMES', cell: (s) => s.names.join(',') || '-' },
  { header: 'SANDBOX', cell: (s) => s.sandboxId ?? '-' },
  { header: 'CREATED', cell: (s) => (s.createdAt === undefined ? '-' : relativeTime(s.createdAt)) },
];

/** `aenv snapshot create`. */
export const snapshotCreateCommand: CommandSpec = {
  name: 'snapshot create',
  summary: 'Snapshot a running sandbox (it keeps running).',
  usage: 'snapshot create [options] ID',
  description:
    "Captures the sandbox's memory and disk; prints the snapshot id, usable as a template.",
  operands: ['sandbox'],
  options: [{ name: 'name', type: 'string', value: 'NAME', help: 'a name for the snapshot' }],
  examples: [
    'SNAP=$(aenv snapshot create 4kq2m9x8a1b2c3d4e5f6 --name ready)',
    'aenv start --detach $SNAP',
  ],
  async run(ctx, args) {
    const [id] = expectOperands(args, ['ID']);
    const name = stringOption(args, 'name');
    const client = await ctx.client();
    const snapshot = await client.sandboxes.snapshot(id ?? '', name === undefined ? {} : { name });
    ctx.out(snapshot.snapshotId);
    return 0;
  },
};

/** `aenv snapshot ls`. */
export const snapshotLsCommand: CommandSpec = {
  name: 'snapshot ls',
  summary: 'List snapshots.',
  usage: 'snapshot ls [options]',
  options: [
    { name: 'sandbox', type: 'string', value: 'ID', help: 'only snapshots of this sandbox' },
    ...LIST_OPTIONS,
  ],
  examples: ['aenv snapshot ls', 'aenv snapshot ls --sandbox 4kq2m9x8a1b2c3d4e5f6 -q'],
  async run(ctx, args) {
    const sandboxId = stringOption(args, 'sandbox');
    const client = await ctx.client();
    const snapshots = await client.snapshots.list(sandboxId === undefined ? {} : { sandboxId });
    printList(ctx, snapshots, {
      format: listFormat(ctx, stringOption(args, 'output'), flag(args, 'quiet')),
      columns: SNAPSHOT_COLUMNS,
      id: (s) => s.snapshotId,
    });
    return 0;
  },
};

/** `aenv snapshot rm`. */
export const snapshotRmCommand: CommandSpec = {
  name: 'snapshot rm',
  summary: 'Remove snapshots.',
  usage: 'snapshot rm [options] SNAPSHOT...',
  operands: ['snapshot'],
  options: [],
  examples: ['aenv snapshot rm 7hd0s8k2l4m6n8p0q2r4'],
  run(ctx, args) {
    const ids = expectOperands(args, ['SNAPSHOT'], true);
    return forEachId(ctx, ids, async (c, id) => {
      if (!(await c.snapshots.delete(id)))
        throw new CliError(`snapshot ${id} not found`, `'aenv snapshot ls' lists the snapshots.`);
    });
  },
};

/** `aenv fork`. */
export const forkCommand: CommandSpec = {
  name: 'fork',
  summary: 'Fork a running sandbox into N copy-on-write copies.',
  usage: 'fork [options] ID',
  description:
    'Makes N copies of the running sandbox (memory and disk, copy-on-write); prints their ids.',
  operands: ['sandbox'],
  options: [
    { name: 'count', short: 'n', type: 'string', value: 'N', help: 'how many copies (default 1)' },
    {
      name: 'timeout',
      short: 't',
      type: 'string',
      value: 'DURATION',
      help: "the copies' time to live",
    },
  ],
  examples: ['aenv fork 4kq2m9x8a1b2c3d4e5f6 -n 4'],
  async run(ctx, args) {
    const [id] = expectOperands(args, ['ID']);
    const countText = stringOption(args, 'count') ?? '1';
    const count = Number(countText);
    if (!Number.isInteger(count) || count < 1)
      throw new UsageError(`-n expects a positive integer (got '${countText}')`);
    const timeout = stringOption(args, 'timeout');
    const client = await ctx.client();
    const sandbox = await client.sandboxes.connect(id ?? '');
    const children = await sandbox.fork(
      count,
      timeout === undefined ? {} : { timeoutMs: parseDuration(timeout, 'timeout') },
    );
    for (const child of children) ctx.out(child.sandboxId);
    return 0;
  },
};
