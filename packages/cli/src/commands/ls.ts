/**
 * `aenv ls`: the node's sandboxes, running and paused.
 *
 * @module
 */
import type { SandboxInfo } from '@aenv/sdk';
import { keyValues, flag, listOption, stringOption } from '../args.js';
import type { CommandSpec } from '../command-spec.js';
import { relativeTime } from '../output/durations.js';
import { LIST_OPTIONS, listFormat, printList, type Column } from '../output/table.js';

/** The table columns of a sandbox list. */
export const SANDBOX_COLUMNS: readonly Column<SandboxInfo>[] = [
  { header: 'SANDBOX ID', cell: (s) => s.sandboxId },
  { header: 'TEMPLATE', cell: (s) => s.alias ?? s.templateId },
  { header: 'STATE', cell: (s) => s.state },
  { header: 'CPUS', cell: (s) => String(s.cpuCount) },
  { header: 'MEMORY', cell: (s) => `${s.memoryMB} MiB` },
  { header: 'STARTED', cell: (s) => relativeTime(s.startedAt) },
  { header: 'ENDS', cell: (s) => (s.state === 'paused' ? '-' : relativeTime(s.endAt)) },
];

/** The command. */
export const lsCommand: CommandSpec = {
  name: 'ls',
  summary: 'List sandboxes.',
  usage: 'ls [options]',
  description: 'Lists running and paused sandboxes: a table on a terminal, JSON when piped.',
  options: [
    {
      name: 'state',
      type: 'string',
      value: 'STATE',
      choices: ['running', 'paused'],
      help: 'only sandboxes in this state',
    },
    {
      name: 'metadata',
      short: 'm',
      type: 'string',
      multiple: true,
      value: 'K=V',
      help: 'only sandboxes with this metadata (repeatable)',
    },
    {
      name: 'template',
      type: 'string',
      value: 'TEMPLATE',
      help: 'only sandboxes of this template',
    },
    ...LIST_OPTIONS,
  ],
  examples: [
    'aenv ls',
    '# ids of paused sandboxes',
    'aenv ls --state paused -q',
    "aenv ls -o json | jq -r '.[].sandboxId'",
  ],
  async run(ctx, args) {
    const state = stringOption(args, 'state') as 'running' | 'paused' | undefined;
    const template = stringOption(args, 'template');
    const metadata = listOption(args, 'metadata');
    const client = await ctx.client();
    const sandboxes = await client.sandboxes.list({
      ...(state === undefined ? {} : { state: [state] }),
      ...(template === undefined ? {} : { template }),
      ...(metadata.length === 0 ? {} : { metadata: keyValues(metadata, 'metadata') }),
    });
    printList(ctx, sandboxes, {
      format: listFormat(ctx, stringOption(args, 'output'), flag(args, 'quiet')),
      columns: SANDBOX_COLUMNS,
      id: (s) => s.sandboxId,
    });
    return 0;
  },
};
