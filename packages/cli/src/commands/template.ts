/**
 * `aenv template ls|rm`, `aenv pull IMAGE` and `aenv build`: the node's
 * templates and making new ones. Pull and build show progress bars; a node
 * without image support answers "not supported yet" (aenv's image work).
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { TemplateInfo } from '@aenv/sdk';
import { expectOperands, flag, stringOption } from '../args.js';
import { CliError, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import { relativeTime } from '../output/durations.js';
import { progressBar } from '../output/progress-bar.js';
import { LIST_OPTIONS, listFormat, printList, type Column } from '../output/table.js';
import { forEachId } from './lifecycle.js';

const TEMPLATE_COLUMNS: readonly Column<TemplateInfo>[] = [
  { header: 'TEMPLATE ID', cell: (t) => t.templateId },
  { header: 'NAMES', cell: (t) => t.aliases.join(',') || '-' },
  { header: 'CPUS', cell: (t) => String(t.cpuCount ?? '-') },
  { header: 'MEMORY', cell: (t) => (t.memoryMB === undefined ? '-' : `${t.memoryMB} MiB`) },
  { header: 'CREATED', cell: (t) => (t.createdAt === undefined ? '-' : relativeTime(t.createdAt)) },
];

/** `aenv template ls`. */
export const templateLsCommand: CommandSpec = {
  name: 'template ls',
  summary: 'List templates.',
  usage: 'template ls [options]',
  options: [...LIST_OPTIONS],
  examples: ['aenv template ls', 'aenv template ls -q'],
  async run(ctx, args) {
    const client = await ctx.client();
    const templates = await client.templates.list();
    printList(ctx, templates, {
      format: listFormat(ctx, stringOption(args, 'output'), flag(args, 'quiet')),
      columns: TEMPLATE_COLUMNS,
      id: (t) => t.templateId,
    });
    return 0;
  },
};

/** `aenv template rm`. */
export const templateRmCommand: CommandSpec = {
  name: 'template rm',
  summary: 'Remove templates.',
  usage: 'template rm [options] TEMPLATE...',
  operands: ['template'],
  options: [],
  examples: ['aenv template rm python'],
  run(ctx, args) {
    const ids = expectOperands(args, ['TEMPLATE'], true);
    return forEachId(ctx, ids, async (c, id) => {
      if (!(await c.templates.delete(id)))
        throw new CliError(`template ${id} not found`, `'aenv template ls' lists the templates.`);
    });
  },
};

/** `aenv pull`. */
export const pullCommand: CommandSpec = {
  name: 'pull',
  summary: 'Make a template from an OCI image.',
  usage: 'pull [options] IMAGE',
  description: 'Pulls IMAGE from its registry and makes a template of it; prints the template id.',
  options: [
    {
      name: 'name',
      type: 'string',
      value: 'NAME',
      help: 'the template name (default: from the image)',
    },
  ],
  examples: ['aenv pull python:3.12-slim --name python', 'aenv pull localhost:5000/tools:latest'],
  async run(ctx, args) {
    const [image] = expectOperands(args, ['IMAGE']);
    const name = stringOption(args, 'name');
    const client = await ctx.client();
    const template = await client.templates.pull(image ?? '', {
      ...(name === undefined ? {} : { name }),
      onProgress: progressBar(ctx.stderr),
    });
    ctx.out(template.templateId);
    return 0;
  },
};

/** `aenv build`. */
export const buildCommand: CommandSpec = {
  name: 'build',
  summary: 'Build a template from a Dockerfile.',
  usage: 'build [options] [CONTEXT]',
  description:
    'Builds a template from a Dockerfile (default: CONTEXT/Dockerfile); prints the template id.',
  operands: ['file'],
  options: [
    {
      name: 'file',
      short: 'f',
      type: 'string',
      value: 'DOCKERFILE',
      help: 'the Dockerfile (default: CONTEXT/Dockerfile)',
    },
    { name: 'name', type: 'string', value: 'NAME', help: 'the template name' },
  ],
  examples: ['aenv build --name agent .', 'aenv build -f docker/agent.Dockerfile --name agent'],
  async run(ctx, args) {
    const [context = '.', extra] = args.positionals;
    if (extra !== undefined) throw new UsageError(`unexpected '${extra}'`);
    const file = resolve(ctx.cwd, stringOption(args, 'file') ?? resolve(context, 'Dockerfile'));
    let dockerfile: string;
    try {
      dockerfile = await readFile(file, 'utf8');
    } catch (err) {
      throw new CliError(
        `cannot read ${file}: ${(err as Error).message}`,
        'Name the Dockerfile with -f.',
      );
    }
    const name = stringOption(args, 'name');
    const client = await ctx.client();
    const template = await client.templates.build(dockerfile, {
      ...(name === undefined ? {} : { name }),
      onProgress: progressBar(ctx.stderr),
    });
    ctx.out(template.templateId);
    return 0;
  },
};
