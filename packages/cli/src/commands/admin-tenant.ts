/**
 * `aenv admin tenant create|ls|show|set|rm`: the node's (or gateway's)
 * tenants and their quotas, through `client.admin.tenants`. Needs an admin
 * key (the local node's own key is one); other keys get
 * `TENANT_ADMIN_REQUIRED`.
 *
 * @module
 */
import type { TenantView } from '@aenv/sdk';
import { expectOperands, flag, stringOption } from '../args.js';
import { UsageError } from '../cli-error.js';
import type { CliContext } from '../cli-context.js';
import type { CommandSpec, OptionSpec } from '../command-spec.js';
import { relativeTime } from '../output/durations.js';
import { LIST_OPTIONS, listFormat, printList, type Column } from '../output/table.js';
import { forEachId } from './lifecycle.js';
import {
  quotaCell,
  quotaOptions,
  quotaUpdateFrom,
  quotasFrom,
  tenantDetail,
} from './tenant-quota-options.js';

/** `--json`: print the tenant as the API answers it. */
export const JSON_OPTION: OptionSpec = {
  name: 'json',
  type: 'boolean',
  help: 'print the JSON the node answered',
};

const TENANT_COLUMNS: readonly Column<TenantView>[] = [
  { header: 'TENANT', cell: (t) => t.id },
  {
    header: 'SANDBOXES',
    cell: (t) => `${t.usage?.sandboxes ?? '-'}/${quotaCell(t, 'maxSandboxes')}`,
  },
  { header: 'VCPUS', cell: (t) => `${t.usage?.vcpus ?? '-'}/${quotaCell(t, 'maxVcpus')}` },
  {
    header: 'MEMORY MIB',
    cell: (t) => `${t.usage?.memoryMB ?? '-'}/${quotaCell(t, 'maxMemoryMB')}`,
  },
  { header: 'CREATES/S', cell: (t) => quotaCell(t, 'createsPerSecond') },
  { header: 'CREATED', cell: (t) => relativeTime(new Date(t.createdAt)) },
];

function printTenant(ctx: CliContext, t: TenantView, json: boolean): void {
  if (json) ctx.out(JSON.stringify(t, null, 2));
  else ctx.stdout.write(tenantDetail(t));
}

/** `aenv admin tenant create`. */
export const tenantCreateCommand: CommandSpec = {
  name: 'admin tenant create',
  summary: 'Create a tenant, with optional quotas.',
  usage: 'admin tenant create [options] ID',
  description:
    "A tenant owns sandboxes, templates and snapshots; its keys see only its own. IDs are 1-63 of a-z, 0-9, '.', '_', '-'. A quota left out means no limit.",
  options: [...quotaOptions(false), JSON_OPTION],
  examples: [
    'aenv admin tenant create team-b --max-sandboxes 20 --max-vcpus 40',
    'aenv admin key create --tenant team-b',
  ],
  async run(ctx, args) {
    const [id = ''] = expectOperands(args, ['ID']);
    const quotas = quotasFrom(args);
    const client = await ctx.client();
    const t = await client.admin.tenants.create({ id, quotas });
    if (flag(args, 'json')) printTenant(ctx, t, true);
    else ctx.out(t.id);
    return 0;
  },
};

/** `aenv admin tenant ls`. */
export const tenantLsCommand: CommandSpec = {
  name: 'admin tenant ls',
  summary: 'List tenants with usage and quotas (used/limit, - = none).',
  usage: 'admin tenant ls [options]',
  options: [...LIST_OPTIONS],
  examples: ['aenv admin tenant ls', 'aenv admin tenant ls -o json'],
  async run(ctx, args) {
    const client = await ctx.client();
    printList(ctx, await client.admin.tenants.list(), {
      format: listFormat(ctx, stringOption(args, 'output'), flag(args, 'quiet')),
      columns: TENANT_COLUMNS,
      id: (t) => t.id,
    });
    return 0;
  },
};

/** `aenv admin tenant show`. */
export const tenantShowCommand: CommandSpec = {
  name: 'admin tenant show',
  summary: "Show a tenant's quotas and what it uses now.",
  usage: 'admin tenant show [options] ID',
  options: [JSON_OPTION],
  examples: ['aenv admin tenant show team-b', 'aenv admin tenant show team-b --json'],
  async run(ctx, args) {
    const [id = ''] = expectOperands(args, ['ID']);
    const client = await ctx.client();
    printTenant(ctx, await client.admin.tenants.get(id), flag(args, 'json'));
    return 0;
  },
};

/** `aenv admin tenant set`. */
export const tenantSetCommand: CommandSpec = {
  name: 'admin tenant set',
  summary: "Change a tenant's quotas (others stay; 0 or none clears one).",
  usage: 'admin tenant set [options] ID',
  options: [...quotaOptions(true), JSON_OPTION],
  examples: [
    'aenv admin tenant set team-b --max-sandboxes 50',
    'aenv admin tenant set team-b --creates-per-second none',
  ],
  async run(ctx, args) {
    const [id = ''] = expectOperands(args, ['ID']);
    const quotas = quotaUpdateFrom(args);
    if (Object.keys(quotas).length === 0) {
      throw new UsageError('give at least one quota (--max-sandboxes, --max-vcpus, ...)');
    }
    const client = await ctx.client();
    printTenant(ctx, await client.admin.tenants.update(id, quotas), flag(args, 'json'));
    return 0;
  },
};

/** `aenv admin tenant rm`. */
export const tenantRmCommand: CommandSpec = {
  name: 'admin tenant rm',
  summary: 'Delete tenants (and revoke their keys); refused while one owns sandboxes.',
  usage: 'admin tenant rm [options] ID...',
  options: [],
  examples: ['aenv admin tenant rm team-b'],
  run(ctx, args) {
    const ids = expectOperands(args, ['ID'], true);
    return forEachId(ctx, ids, (c, id) => c.admin.tenants.delete(id));
  },
};
