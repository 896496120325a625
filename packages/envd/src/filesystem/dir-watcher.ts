/**
 * Watches a directory (optionally its whole tree) with inotify, through one
 * non-recursive `fs.watch` per directory, and reports events in fsnotify's
 * terms, as E2B's envd does: CREATE, WRITE, REMOVE, RENAME, CHMOD, named
 * relative to the watched directory.
 *
 * `fs.watch` only says "rename" (create/delete/move) or "change"
 * (modify/attributes), so events are collected for one event-loop turn (one
 * inotify read) and classified by looking at the filesystem:
 * - "rename" of a path that exists: CREATE; that no longer exists: REMOVE, or
 *   RENAME when another path of the same batch appeared (a move inside the
 *   tree); an even number of "rename" events for one name means it was both
 *   created and removed (or the reverse) within the batch.
 * - "change": WRITE when the mtime equals the ctime (a write sets both),
 *   else CHMOD (only the ctime moved).
 * New directories of a recursive watch are watched as they appear.
 *
 * @module
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { EventType } from '../gen/filesystem/filesystem_pb.js';
import type { EntryInfoMessage } from './entry-info.js';

/** One classified filesystem event. */
export interface WatchEvent {
  /** Path relative to the watched directory. */
  readonly name: string;
  /** Absolute path. */
  readonly path: string;
  readonly type: EventType;
  /** The entry as it is now, when the client asked for it (`includeEntry`). */
  readonly entry?: EntryInfoMessage;
}

interface RawEvent {
  readonly path: string;
  readonly kind: 'rename' | 'change';
}

/** What classification needs to know about a path now. */
interface PathState {
  readonly isDir: boolean;
  /** mtime equals ctime: the last change was a write. */
  readonly write: boolean;
}

async function pathState(path: string): Promise<PathState | undefined> {
  try {
    const st = await lstat(path, { bigint: true });
    return { isDir: st.isDirectory(), write: st.mtimeNs === st.ctimeNs };
  } catch {
    return undefined;
  }
}

/** A live watch of one directory (tree). */
export class DirWatcher {
  readonly #root: string;
  readonly #recursive: boolean;
  readonly #onEvents: (events: WatchEvent[]) => void;
  readonly #watchers = new Map<string, FSWatcher>();
  #batch: RawEvent[] = [];
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(root: string, recursive: boolean, onEvents: (events: WatchEvent[]) => void) {
    this.#root = root;
    this.#recursive = recursive;
    this.#onEvents = onEvents;
  }

  /** Starts watching; rejects when the root itself cannot be watched. */
  async start(): Promise<void> {
    this.#watchDir(this.#root, true);
    if (this.#recursive) await this.#watchTree(this.#root);
  }

  /** Stops every watch. */
  close(): void {
    this.#closed = true;
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }

  #watchDir(dir: string, required: boolean): void {
    if (this.#closed || this.#watchers.has(dir)) return;
    let w: FSWatcher;
    try {
      w = watch(dir, { persistent: false }, (kind, filename) => {
        if (filename !== null) this.#record({ path: join(dir, filename.toString()), kind });
      });
    } catch (err) {
      if (required) throw err;
      return;
    }
    w.on('error', () => {
      w.close();
      this.#watchers.delete(dir);
    });
    this.#watchers.set(dir, w);
  }

  async #watchTree(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const sub = join(dir, entry.name);
      this.#watchDir(sub, false);
      await this.#watchTree(sub);
    }
  }

  #record(event: RawEvent): void {
    if (this.#closed) return;
    this.#batch.push(event);
    if (this.#batch.length === 1) setImmediate(() => this.#scheduleFlush());
  }

  #scheduleFlush(): void {
    const batch = this.#batch;
    this.#batch = [];
    // Flushes run one after another so events keep their order.
    this.#flushing = this.#flushing.then(() => this.#flush(batch)).catch(() => {});
  }

  async #flush(batch: RawEvent[]): Promise<void> {
    const renames = new Map<string, number>();
    const changes = new Set<string>();
    for (const e of batch) {
      if (e.kind === 'rename') renames.set(e.path, (renames.get(e.path) ?? 0) + 1);
      else changes.add(e.path);
    }
    const now = new Map<string, PathState | undefined>();
    for (const path of new Set([...renames.keys(), ...changes]))
      now.set(path, await pathState(path));
    const out = classify(renames, changes, now);
    if (this.#recursive) {
      for (const e of out) {
        if (e.type !== EventType.CREATE || now.get(e.path)?.isDir !== true) continue;
        this.#watchDir(e.path, false);
        await this.#watchTree(e.path);
      }
    }
    if (out.length > 0 && !this.#closed) {
      this.#onEvents(out.map((e) => ({ ...e, name: relative(this.#root, e.path) })));
    }
  }
}

/** Turns one batch of raw events into fsnotify-style events (see the module comment). */
function classify(
  renames: ReadonlyMap<string, number>,
  changes: ReadonlySet<string>,
  now: ReadonlyMap<string, PathState | undefined>,
): WatchEvent[] {
  const out: WatchEvent[] = [];
  const emit = (path: string, type: EventType): void => void out.push({ name: path, path, type });
  const appeared = [...renames.keys()].some((p) => now.get(p) !== undefined);
  for (const [path, count] of renames) {
    const gone = now.get(path) === undefined;
    const twice = count % 2 === 0;
    if (gone) {
      if (twice) emit(path, EventType.CREATE);
      emit(path, appeared && !twice ? EventType.RENAME : EventType.REMOVE);
    } else {
      if (twice) emit(path, EventType.REMOVE);
      emit(path, EventType.CREATE);
    }
  }
  for (const path of changes) {
    const st = now.get(path);
    // A directory has no content to write: its "change" is an attribute change.
    if (st !== undefined) emit(path, st.write && !st.isDir ? EventType.WRITE : EventType.CHMOD);
  }
  return out;
}
