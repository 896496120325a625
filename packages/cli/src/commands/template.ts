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
import type { CommandSpec, ParsedArgs } from '../command-spec.js';
import { relativeTime } from '../output/durations.js';
import { progressBar } from '../output/progress-bar.js';
import { LIST_OPTIONS, listFormat, printList, type Column } from '../output/table.js';
import { forEachId } from './lifecycle.js';
import { CONTEXT_DOCKERFILE, packContext } from './build-context.js';

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

/** Reads `--cpu` and `--memory` (MiB) into SDK options. */
function shapeOptions(args: ParsedArgs): {
  cpuCount?: number;
  memoryMB?: number;
} {
  const out: { cpuCount?: number; memoryMB?: number } = {};
  for (const [option, key, min] of [
    ['cpu', 'cpuCount', 1],
    ['memory', 'memoryMB', 128],
  ] as const) {
    const raw = stringOption(args, option);
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`--${option} must be an integer >= ${min}`);
    out[key] = n;
  }
  return out;
}

const SHAPE_OPTIONS = [
  { name: 'cpu', type: 'string', value: 'N', help: "vCPUs of its sandboxes (default: the node's)" },
  {
    name: 'memory',
    type: 'string',
    value: 'MIB',
    help: "memory of its sandboxes, MiB (default: the node's)",
  },
] as const;

/** `aenv pull`. */
export const pullCommand: CommandSpec = {
  name: 'pull',
  summary: 'Make a template from an OCI image.',
  usage: 'pull [options] IMAGE',
  description:
    "Pulls IMAGE from its registry (credentials: the node's ~/.docker/config.json), converts its layers " +
    '(layers other images share are reused) and makes a template of it; prints the template id. ' +
    'A template of the same name is rebuilt.',
  options: [
    {
      name: 'name',
      type: 'string',
      value: 'NAME',
      help: "the template name (default: the repository's last part)",
    },
    {
      name: 'start-cmd',
      type: 'string',
      value: 'CMD',
      help: 'a process started in the template (runs in every sandbox)',
    },
    {
      name: 'ready-cmd',
      type: 'string',
      value: 'CMD',
      help: 'retried until it succeeds before the snapshot',
    },
    ...SHAPE_OPTIONS,
  ],
  examples: [
    'aenv pull python:3.12-slim --name python',
    'aenv pull localhost:5000/tools:latest',
    "aenv pull nginx:1 --start-cmd 'nginx -g \"daemon off;\"' --ready-cmd 'wget -qO- localhost'",
  ],
  async run(ctx, args) {
    const [image] = expectOperands(args, ['IMAGE']);
    const name = stringOption(args, 'name');
    const startCmd = stringOption(args, 'start-cmd');
    const readyCmd = stringOption(args, 'ready-cmd');
    const client = await ctx.client();
    const template = await client.templates.pull(image ?? '', {
      ...(name === undefined ? {} : { name }),
      ...(startCmd === undefined ? {} : { startCmd }),
      ...(readyCmd === undefined ? {} : { readyCmd }),
      ...shapeOptions(args),
      onProgress: progressBar(ctx.stderr),
    });
    ctx.out(template.templateId);
    return 0;
  },
};

/** Whether a Dockerfile copies files from its context. */
export function needsContext(dockerfile: string): boolean {
  return /^\s*(COPY|ADD)\s/im.test(dockerfile);
}

/** `aenv build`. */
export const buildCommand: CommandSpec = {
  name: 'build',
  summary: 'Build a template from a Dockerfile.',
  usage: 'build [options] [CONTEXT]',
  description:
    'Builds a template from a Dockerfile (default: CONTEXT/Dockerfile): FROM is pulled, RUN, ENV, ARG, WORKDIR, ' +
    'USER, COPY and ADD (local files, sent with the context) run in a microVM, ENTRYPOINT/CMD is started and kept ' +
    'running in every sandbox; prints the template id.',
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
    ...SHAPE_OPTIONS,
  ],
  examples: ['aenv build --name agent .', 'aenv build -f docker/agent.Dockerfile --name agent'],
  async run(ctx, args) {
    const [context = '.', extra] = args.positionals;
    if (extra !== undefined) throw new UsageError(`unexpected '${extra}'`);
    const contextDir = resolve(ctx.cwd, context);
    const file = resolve(ctx.cwd, stringOption(args, 'file') ?? resolve(contextDir, 'Dockerfile'));
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
    const options = {
      ...(name === undefined ? {} : { name }),
      ...shapeOptions(args),
      onProgress: progressBar(ctx.stderr),
    };
    const template = needsContext(dockerfile)
      ? await client.templates.buildContext(await packContext(contextDir, file), {
          ...options,
          dockerfile: CONTEXT_DOCKERFILE,
        })
      : await client.templates.build(dockerfile, options);
    ctx.out(template.templateId);
    return 0;
  },
};
