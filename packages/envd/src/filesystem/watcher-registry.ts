/**
 * Polling watchers (`CreateWatcher` / `GetWatcherEvents` / `RemoveWatcher`),
 * for clients that cannot hold a stream open (the sync Python SDK): each
 * watcher buffers its events until the next poll.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { AenvError } from '@aenv/shared';
import { DirWatcher, type WatchEvent } from './dir-watcher.js';

/** Events a watcher keeps between polls; older ones are dropped beyond it. */
export const MAX_BUFFERED_EVENTS = 10_000;

interface Entry {
  readonly watcher: DirWatcher;
  events: WatchEvent[];
}

/** The polling watchers of one envd. */
export class WatcherRegistry {
  readonly #entries = new Map<string, Entry>();

  /** Starts a watcher and returns its id. */
  async create(
    path: string,
    recursive: boolean,
    enrich: (events: WatchEvent[]) => Promise<WatchEvent[]>,
  ): Promise<string> {
    const id = randomUUID();
    const entry: Entry = {
      events: [],
      watcher: new DirWatcher(path, recursive, (events) => {
        void enrich(events).then((full) => {
          entry.events.push(...full);
          if (entry.events.length > MAX_BUFFERED_EVENTS)
            entry.events.splice(0, entry.events.length - MAX_BUFFERED_EVENTS);
        });
      }),
    };
    await entry.watcher.start();
    this.#entries.set(id, entry);
    return id;
  }

  /**
   * The events since the last call.
   * @throws {AenvError} `ENVD_WATCHER_NOT_FOUND`.
   */
  take(id: string): WatchEvent[] {
    const entry = this.#get(id);
    const events = entry.events;
    entry.events = [];
    return events;
  }

  /**
   * Stops a watcher.
   * @throws {AenvError} `ENVD_WATCHER_NOT_FOUND`.
   */
  remove(id: string): void {
    this.#get(id).watcher.close();
    this.#entries.delete(id);
  }

  /** Stops every watcher (envd shutdown). */
  closeAll(): void {
    for (const entry of this.#entries.values()) entry.watcher.close();
    this.#entries.clear();
  }

  #get(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      throw new AenvError('ENVD_WATCHER_NOT_FOUND', `watcher with id ${id} not found`, {
        fields: { watcherId: id },
      });
    }
    return entry;
  }
}
