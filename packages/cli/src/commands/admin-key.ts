/**
 * `aenv admin key create|ls|revoke`: API keys of tenants, through
 * `client.admin.keys`. A key is shown once, when it is created; after that
 * only its prefix. Needs an admin key.
 *
 * @module
 */
import type { ApiKeyView } from '@aenv/sdk';
import { expectOperands, flag, stringOption } from '../args.js';
import { UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';
import { relativeTime } from '../output/durations.js';
import { LIST_OPTIONS, listFormat, printList, type Column } from '../output/table.js';
import { JSON_OPTION } from './admin-tenant.js';
import { forEachId } from './lifecycle.js';

const KEY_COLUMNS: readonly Column<ApiKeyView>[] = [
  { header: 'KEY ID', cell: (k) => k.id },
  { header: 'TENANT', cell: (k) => k.tenant },
  { header: 'NAME', cell: (k) => k.name || '-' },
  { header: 'ROLE', cell: (k) => k.role },
  { header: 'PREFIX', cell: (k) => `${k.prefix}…` },
  { header: 'CREATED', cell: (k) => relativeTime(new Date(k.createdAt)) },
  {
    header: 'REVOKED',
    cell: (k) => (k.revokedAt === undefined ? '-' : relativeTime(new Date(k.revokedAt))),
  },
];

/** `aenv admin key create`. */
export const keyCreateCommand: CommandSpec = {
  name: 'admin key create',
  summary: 'Create an API key for a tenant (shown once).',
  usage: 'admin key create [options] --tenant ID',
  description:
    'Prints the new key on stdout; it is stored only hashed and is not shown again. A member key acts within its tenant; an admin key also manages tenants and keys.',
  options: [
    { name: 'tenant', type: 'string', value: 'ID', help: 'the tenant the key belongs to' },
    { name: 'name', type: 'string', value: 'NAME', help: 'a label for the key' },
    {
      name: 'role',
      type: 'string',
      value: 'ROLE',
      choices: ['member', 'admin'],
      help: 'member (default) or admin',
    },
    { ...JSON_OPTION, help: 'print the whole answer as JSON (key included)' },
  ],
  examples: [
    'KEY=$(aenv admin key create --tenant team-b --name ci)',
    'aenv admin key create --tenant default --role admin --json',
  ],
  async run(ctx, args) {
    expectOperands(args, []);
    const tenant = stringOption(args, 'tenant');
    if (tenant === undefined) throw new UsageError('--tenant ID is required');
    const name = stringOption(args, 'name');
    const role = stringOption(args, 'role') as 'admin' | 'member' | undefined;
    const client = await ctx.client();
    const created = await client.admin.keys.create({
      tenant,
      ...(name === undefined ? {} : { name }),
      ...(role === undefined ? {} : { role }),
    });
    if (flag(args, 'json')) {
      ctx.out(JSON.stringify(created, null, 2));
    } else {
      ctx.out(created.key);
    }
    ctx.err(
      `Created ${created.role} key ${created.id} for tenant '${created.tenant}'. ` +
        'Store it now: it will not be shown again.',
    );
    return 0;
  },
};

/** `aenv admin key ls`. */
export const keyLsCommand: CommandSpec = {
  name: 'admin key ls',
  summary: 'List API keys (their prefixes, never the keys).',
  usage: 'admin key ls [options]',
  options: [
    { name: 'tenant', type: 'string', value: 'ID', help: 'only the keys of this tenant' },
    ...LIST_OPTIONS,
  ],
  examples: ['aenv admin key ls', 'aenv admin key ls --tenant team-b -q'],
  async run(ctx, args) {
    const tenant = stringOption(args, 'tenant');
    const client = await ctx.client();
    const keys = await client.admin.keys.list(tenant === undefined ? {} : { tenant });
    printList(ctx, keys, {
      format: listFormat(ctx, stringOption(args, 'output'), flag(args, 'quiet')),
      columns: KEY_COLUMNS,
      id: (k) => k.id,
    });
    return 0;
  },
};

/** `aenv admin key revoke`. */
export const keyRevokeCommand: CommandSpec = {
  name: 'admin key revoke',
  summary: 'Revoke API keys (refused from the next request on).',
  usage: 'admin key revoke [options] KEY-ID...',
  options: [],
  examples: ['aenv admin key revoke 3f9a0c1d2e4b5a6c7d8e'],
  run(ctx, args) {
    const ids = expectOperands(args, ['KEY-ID'], true);
    return forEachId(ctx, ids, (c, id) => c.admin.keys.revoke(id));
  },
};
