/**
 * `GET /v2/sandboxes` (filters, pagination with `x-next-token`) and the
 * 1.x SDKs' `GET /sandboxes` (running sandboxes, `metadata` filter, no
 * pages). See e2b-protocol.md §2.4 for the double-encoded `metadata`.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { SandboxRecord, SandboxState } from '../../orchestrator/sandbox.js';
import type { ApiContext } from '../api-context.js';
import { queryInteger } from '../fields.js';
import type { Reply, RouteContext } from '../router.js';
import { scopeOf, sees } from '../tenant-access.js';
import { toListedView } from '../sandbox-view.js';

/** E2B states → the internal states they show. */
const STATES: Readonly<Record<string, SandboxState[]>> = {
  running: ['running', 'resuming', 'snapshotting', 'forking', 'failed'],
  paused: ['paused', 'pausing'],
};

/** Parses the `metadata` query value: `k=v&k2=v2` with each part percent-encoded. */
export function parseMetadataQuery(value: string | null): Record<string, string> | undefined {
  if (value === null || value === '') return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(value)) out[k] = v;
  return out;
}

function parseStates(value: string | null): SandboxState[] | undefined {
  if (value === null || value === '') return undefined;
  return value.split(',').flatMap((s) => {
    const states = STATES[s.trim()];
    if (states === undefined) {
      throw new AenvError('API_BODY_INVALID', `query parameter 'state': unknown state '${s}'`, {
        fields: { field: 'state' },
      });
    }
    return states;
  });
}

function parseDate(value: string | null, name: string): Date | undefined {
  if (value === null || value === '') return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) {
    throw new AenvError('API_BODY_INVALID', `query parameter '${name}': not an RFC 3339 time`, {
      fields: { field: name },
    });
  }
  return d;
}

/** Page tokens: the id of the last sandbox of the previous page, base64url. */
function decodeToken(token: string | null): string | undefined {
  if (token === null || token === '') return undefined;
  return Buffer.from(token, 'base64url').toString('utf8');
}

function page(records: SandboxRecord[], limit: number, after: string | undefined): Reply {
  let start = 0;
  if (after !== undefined) {
    start = records.findIndex((r) => r.id === after) + 1;
    if (start === 0) {
      throw new AenvError('API_BODY_INVALID', "query parameter 'nextToken' is not valid", {
        fields: { field: 'nextToken' },
      });
    }
  }
  const items = records.slice(start, start + limit);
  const more = start + limit < records.length;
  const last = items[items.length - 1];
  const headers: Record<string, string> =
    more && last !== undefined
      ? { 'x-next-token': Buffer.from(last.id).toString('base64url') }
      : {};
  return { status: 200, body: items.map(toListedView), headers };
}

/** The v2 list handler. */
export function listSandboxesV2(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const q = ctx.query;
    const order = q.get('order') ?? 'asc';
    if (order !== 'asc' && order !== 'desc') {
      throw new AenvError('API_BODY_INVALID', "query parameter 'order': expected asc or desc", {
        fields: { field: 'order' },
      });
    }
    const records = api.orchestrator.list({
      states: parseStates(q.get('state')),
      metadata: parseMetadataQuery(q.get('metadata')),
      templateId: q.get('template') ?? undefined,
      startedAfter: parseDate(q.get('startedAfter'), 'startedAfter'),
    });
    const scope = scopeOf(ctx);
    const own = records.filter((r) => sees(scope, r));
    if (order === 'desc') own.reverse();
    const limit = queryInteger(q, 'limit', 100, { min: 1, max: 100 });
    return page(own, limit, decodeToken(q.get('nextToken')));
  };
}

/** The v1 list handler. */
export function listSandboxesV1(api: ApiContext) {
  return (ctx: RouteContext): Reply => {
    const records = api.orchestrator.list({
      states: STATES.running,
      metadata: parseMetadataQuery(ctx.query.get('metadata')),
    });
    const scope = scopeOf(ctx);
    return { status: 200, body: records.filter((r) => sees(scope, r)).map(toListedView) };
  };
}
