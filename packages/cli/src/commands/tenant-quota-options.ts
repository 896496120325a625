/**
 * The quota flags of `aenv admin tenant create|set` and how a tenant's
 * quotas and usage are printed. A flag's value is a non-negative integer
 * (`--creates-per-second` may be fractional); on `set`, `0` or `none`
 * clears the quota (no limit).
 *
 * @module
 */
import type { TenantQuotas, TenantQuotasUpdate, TenantView } from '@aenv/sdk';
import { stringOption } from '../args.js';
import { UsageError } from '../cli-error.js';
import type { OptionSpec, ParsedArgs } from '../command-spec.js';
import { relativeTime } from '../output/durations.js';

/** One quota flag and the quota it sets. */
interface QuotaFlag {
  readonly flag: string;
  readonly quota: keyof TenantQuotas;
  readonly value: string;
  readonly help: string;
  readonly label: string;
  readonly unit?: string;
}

const QUOTA_FLAGS: readonly QuotaFlag[] = [
  {
    flag: 'max-sandboxes',
    quota: 'maxSandboxes',
    value: 'N',
    help: 'sandboxes at once (running or paused)',
    label: 'Sandboxes',
  },
  {
    flag: 'max-vcpus',
    quota: 'maxVcpus',
    value: 'N',
    help: 'vCPUs of running sandboxes',
    label: 'vCPUs',
  },
  {
    flag: 'max-memory-mb',
    quota: 'maxMemoryMB',
    value: 'N',
    help: 'memory of running sandboxes, MiB',
    label: 'Memory',
    unit: ' MiB',
  },
  {
    flag: 'creates-per-second',
    quota: 'createsPerSecond',
    value: 'R',
    help: 'sandbox creates per second (forks included)',
    label: 'Creates/s',
  },
];

/** The quota options; `clears` adds "0 or none clears" to their help. */
export function quotaOptions(clears: boolean): OptionSpec[] {
  return QUOTA_FLAGS.map((q) => ({
    name: q.flag,
    type: 'string',
    value: q.value,
    help: clears ? `${q.help}; 0 or none clears it` : q.help,
  }));
}

function parseQuota(q: QuotaFlag, text: string, clears: boolean): number | null {
  if (clears && (text === 'none' || text === '0')) return null;
  const n = Number(text);
  const fractional = q.quota === 'createsPerSecond';
  if (text.trim() === '' || !Number.isFinite(n) || n < 0 || (!fractional && !Number.isInteger(n))) {
    const what = fractional ? 'a non-negative number' : 'a non-negative integer';
    throw new UsageError(
      `--${q.flag} expects ${what}${clears ? " (0 or 'none' clears it)" : ''} (got '${text}')`,
    );
  }
  return n;
}

/** The quotas the flags give (create: no clearing). @throws {UsageError} */
export function quotasFrom(args: ParsedArgs): TenantQuotas {
  const out: { -readonly [K in keyof TenantQuotas]?: number } = {};
  for (const q of QUOTA_FLAGS) {
    const text = stringOption(args, q.flag);
    if (text !== undefined) out[q.quota] = parseQuota(q, text, false) ?? 0;
  }
  return out;
}

/** The quota changes the flags give (`null` clears one). @throws {UsageError} */
export function quotaUpdateFrom(args: ParsedArgs): TenantQuotasUpdate {
  const out: { -readonly [K in keyof TenantQuotas]?: number | null } = {};
  for (const q of QUOTA_FLAGS) {
    const text = stringOption(args, q.flag);
    if (text !== undefined) out[q.quota] = parseQuota(q, text, true);
  }
  return out;
}

/** `2`, or `-` when there is no limit. */
export function quotaCell(t: TenantView, quota: keyof TenantQuotas): string {
  const v = t.quotas[quota];
  return v === undefined || v === 0 ? '-' : String(v);
}

function usageOf(t: TenantView, quota: keyof TenantQuotas): number | undefined {
  if (quota === 'maxSandboxes') return t.usage?.sandboxes;
  if (quota === 'maxVcpus') return t.usage?.vcpus;
  if (quota === 'maxMemoryMB') return t.usage?.memoryMB;
  return undefined;
}

/** `aenv admin tenant show`'s text: each quota with what is in use. */
export function tenantDetail(t: TenantView, now = new Date()): string {
  const rows: [string, string][] = [
    ['Tenant', t.id],
    ['Created', `${t.createdAt} (${relativeTime(new Date(t.createdAt), now)})`],
  ];
  for (const q of QUOTA_FLAGS) {
    const used = usageOf(t, q.quota);
    const limit = t.quotas[q.quota];
    const limitText =
      limit === undefined || limit === 0 ? 'no limit' : `limit ${limit}${q.unit ?? ''}`;
    rows.push([q.label, used === undefined ? limitText : `${used}${q.unit ?? ''} (${limitText})`]);
  }
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width)}  ${v}\n`).join('');
}
