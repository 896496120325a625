/**
 * `GET /sandboxes/{id}/logs?lines=N` (aenv extension): the tail of the
 * sandbox's VM console (`$AENV_HOME/sandboxes/<id>/serial.log`, where the
 * launcher has the VMM write it), as text. 200 with an empty body when the
 * sandbox has no machine (paused: the machine and its log are gone); 404
 * when unknown. The id is looked up before any path is built from it.
 *
 * @module
 */
import { join } from 'node:path';
import type { ApiContext } from '../api-context.js';
import { tailConsoleLog } from '../console-tail.js';
import { queryInteger } from '../fields.js';
import type { Reply, RouteContext } from '../router.js';
import { sandboxParam } from '../tenant-access.js';

/** Lines returned when the request does not say. */
export const DEFAULT_LOG_LINES = 200;

/** Most lines one request may ask for. */
export const MAX_LOG_LINES = 10_000;

/** The console-log handler. */
export function getSandboxLogs(api: ApiContext) {
  return async (ctx: RouteContext): Promise<Reply> => {
    const record = sandboxParam(api, ctx);
    const lines = queryInteger(ctx.query, 'lines', DEFAULT_LOG_LINES, {
      min: 1,
      max: MAX_LOG_LINES,
    });
    const log = join(api.home, 'sandboxes', record.id, 'serial.log');
    return {
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      text: await tailConsoleLog(log, lines),
    };
  };
}
