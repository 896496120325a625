/**
 * The `filesystem.Filesystem` Connect service: resolves each request's user
 * and paths, then calls the operation.
 *
 * @module
 */
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { EnvdContext } from '../envd-context.js';
import type { Filesystem } from '../gen/filesystem/filesystem_pb.js';
import { requestUser } from '../process/start-process.js';
import { serverStream, unary } from '../rpc/rpc-errors.js';
import { entryInfo } from './entry-info.js';
import { listDir, makeDir, move, remove } from './fs-operations.js';
import { assertWatchable, enricher, eventMessage, watchDir } from './watch-dir.js';

/** The implementation of `filesystem.Filesystem` for one envd. */
export function filesystemService(ctx: EnvdContext): ServiceImpl<typeof Filesystem> {
  const log = ctx.logger;
  const users = ctx.state.users;
  /** The user of a request and the absolute paths it names. */
  async function target(hctx: HandlerContext, ...raw: string[]) {
    const user = requestUser(ctx, hctx);
    const paths = await Promise.all(
      raw.map((p) => ctx.paths.resolve(p, user, ctx.state.defaultWorkdir)),
    );
    return { user, paths };
  }
  return {
    stat: unary(log, 'Stat', async (req, hctx) => {
      const { paths } = await target(hctx, req.path);
      return { entry: await entryInfo(paths[0] ?? '', users) };
    }),
    makeDir: unary(log, 'MakeDir', async (req, hctx) => {
      const { user, paths } = await target(hctx, req.path);
      return { entry: await makeDir(paths[0] ?? '', user, users) };
    }),
    move: unary(log, 'Move', async (req, hctx) => {
      const { user, paths } = await target(hctx, req.source, req.destination);
      return { entry: await move(paths[0] ?? '', paths[1] ?? '', user, users) };
    }),
    listDir: unary(log, 'ListDir', async (req, hctx) => {
      const { paths } = await target(hctx, req.path);
      return { entries: await listDir(paths[0] ?? '', req.depth, users) };
    }),
    remove: unary(log, 'Remove', async (req, hctx) => {
      const { paths } = await target(hctx, req.path);
      await remove(paths[0] ?? '');
      return {};
    }),
    watchDir: serverStream(log, 'WatchDir', async function* (req, hctx) {
      const { paths } = await target(hctx, req.path);
      yield* watchDir(ctx, req, paths[0] ?? '', hctx);
    }),
    createWatcher: unary(log, 'CreateWatcher', async (req, hctx) => {
      const { paths } = await target(hctx, req.path);
      const path = paths[0] ?? '';
      await assertWatchable(path, req.allowNetworkMounts);
      return {
        watcherId: await ctx.watchers.create(
          path,
          req.recursive,
          enricher(users, req.includeEntry),
        ),
      };
    }),
    getWatcherEvents: unary(log, 'GetWatcherEvents', (req) => ({
      events: ctx.watchers.take(req.watcherId).map(eventMessage),
    })),
    removeWatcher: unary(log, 'RemoveWatcher', (req) => {
      ctx.watchers.remove(req.watcherId);
      return {};
    }),
  };
}
