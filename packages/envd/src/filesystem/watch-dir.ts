/**
 * `WatchDir` (streaming) and the polling watcher RPCs.
 *
 * The watched path must be an existing directory (`not_found`,
 * `invalid_argument` otherwise) and, unless `allowNetworkMounts` is set, not
 * on a network filesystem (NFS, CIFS/SMB, FUSE), as in E2B's envd.
 *
 * @module
 */
import { stat, statfs } from 'node:fs/promises';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import { AenvError } from '@aenv/shared';
import type { EnvdContext } from '../envd-context.js';
import { fsError } from '../errors.js';
import type {
  FilesystemEventSchema,
  WatchDirRequest,
  WatchDirResponseSchema,
} from '../gen/filesystem/filesystem_pb.js';
import { EventQueue } from '../rpc/event-queue.js';
import { keepaliveInterval, pumpEvents } from '../rpc/keepalive-pump.js';
import type { UserDb } from '../users/user-db.js';
import { DirWatcher, type WatchEvent } from './dir-watcher.js';
import { entryInfo } from './entry-info.js';

/** Filesystem magic numbers of network filesystems (linux/magic.h). */
const NETWORK_FS_MAGIC = new Set([0x6969, 0xff534d42, 0x517b, 0xfe534d42, 0x65735546]);

/** What both watch flavours are asked. */
export interface WatchOptions {
  readonly path: string;
  readonly recursive: boolean;
  readonly includeEntry: boolean;
  readonly allowNetworkMounts: boolean;
}

/**
 * Checks that `path` can be watched.
 * @throws {AenvError} `ENVD_PATH_NOT_FOUND`, `ENVD_NOT_A_DIRECTORY`, `ENVD_NETWORK_MOUNT`.
 */
export async function assertWatchable(path: string, allowNetworkMounts: boolean): Promise<void> {
  const st = await stat(path).catch((err: unknown) => {
    throw fsError(err, 'stat', path);
  });
  if (!st.isDirectory()) {
    throw new AenvError('ENVD_NOT_A_DIRECTORY', `path ${path} not a directory`, {
      fields: { path },
    });
  }
  if (allowNetworkMounts) return;
  const fs = await statfs(path).catch(() => undefined);
  if (fs !== undefined && NETWORK_FS_MAGIC.has(fs.type)) {
    throw new AenvError('ENVD_NETWORK_MOUNT', `cannot watch path on network filesystem: ${path}`, {
      fields: { path },
    });
  }
}

/** Adds the entries of events when asked to (`includeEntry`). */
export function enricher(
  users: UserDb,
  includeEntry: boolean,
): (events: WatchEvent[]) => Promise<WatchEvent[]> {
  if (!includeEntry) return (events) => Promise.resolve(events);
  return (events) =>
    Promise.all(
      events.map(async (e) => ({
        ...e,
        entry: await entryInfo(e.path, users).catch(() => ({ name: e.name, path: e.path })),
      })),
    );
}

/** A `FilesystemEvent` message. */
export function eventMessage(e: WatchEvent): MessageInitShape<typeof FilesystemEventSchema> {
  return { name: e.name, type: e.type, ...(e.entry !== undefined ? { entry: e.entry } : {}) };
}

type WatchDirMessage = MessageInitShape<typeof WatchDirResponseSchema>;

/** `WatchDir`: a `start` event, then filesystem events and keepalives. */
export async function* watchDir(
  ctx: EnvdContext,
  req: WatchDirRequest,
  path: string,
  hctx: HandlerContext,
): AsyncGenerator<WatchDirMessage> {
  await assertWatchable(path, req.allowNetworkMounts);
  const queue = new EventQueue<WatchEvent>();
  const enrich = enricher(ctx.state.users, req.includeEntry);
  let chain = Promise.resolve();
  const watcher = new DirWatcher(path, req.recursive, (events) => {
    chain = chain.then(async () => {
      for (const e of await enrich(events)) queue.push(e);
    });
  });
  await watcher.start().catch((err: unknown) => {
    throw fsError(err, 'watch', path);
  });
  try {
    yield { event: { case: 'start', value: {} } };
    yield* pumpEvents<WatchEvent, WatchDirMessage>(queue, {
      signal: hctx.signal,
      intervalMs: keepaliveInterval(hctx.requestHeader),
      keepalive: () => ({ event: { case: 'keepalive', value: {} } }),
      toMessage: (e) => ({ event: { case: 'filesystem', value: eventMessage(e) } }),
    });
  } finally {
    watcher.close();
  }
}
