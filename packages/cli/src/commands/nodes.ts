/**
 * `aenv nodes`: the nodes behind a gateway, with capacity and usage. A
 * single node without cluster support answers "not supported yet".
 *
 * @module
 */
import type { NodeInfo } from '@aenv/sdk';
import { flag, stringOption } from '../args.js';
import type { CommandSpec } from '../command-spec.js';
import { LIST_OPTIONS, listFormat, printList, type Column } from '../output/table.js';

const NODE_COLUMNS: readonly Column<NodeInfo>[] = [
  { header: 'NODE ID', cell: (n) => n.nodeId },
  { header: 'STATUS', cell: (n) => n.status ?? '-' },
  { header: 'SANDBOXES', cell: (n) => String(n.sandboxCount ?? '-') },
  { header: 'CPUS', cell: (n) => String(n.cpuCount ?? '-') },
  { header: 'MEMORY', cell: (n) => (n.memoryMB === undefined ? '-' : `${n.memoryMB} MiB`) },
  { header: 'URL', cell: (n) => n.url ?? '-' },
];

/** The command. */
export const nodesCommand: CommandSpec = {
  name: 'nodes',
  summary: 'List nodes (behind a gateway).',
  usage: 'nodes [options]',
  options: [...LIST_OPTIONS],
  examples: ['aenv nodes', 'aenv nodes -o json'],
  async run(ctx, args) {
    const client = await ctx.client();
    const nodes = await client.nodes.list();
    printList(ctx, nodes, {
      format: listFormat(ctx, stringOption(args, 'output'), flag(args, 'quiet')),
      columns: NODE_COLUMNS,
      id: (n) => n.nodeId,
    });
    return 0;
  },
};
