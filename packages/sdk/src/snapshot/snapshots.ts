/**
 * `client.snapshots`: the node's snapshots (create one with
 * `sandbox.snapshot()`; create sandboxes from a snapshot's id or name). A
 * node without snapshot routes answers {@link NotSupportedError}.
 *
 * @module
 */
import { expectJson, pathOf, type ApiClient } from '../api/api-client.js';
import type { SnapshotWire } from '../api/api-wire.js';
import type { RequestOptions } from '../api/http.js';
import { NotFoundError, NotSupportedError } from '../errors.js';
import { toSnapshotInfo, type SnapshotInfo } from './snapshot-info.js';

const feature = 'snapshots';

/** Snapshot operations. */
export class Snapshots {
  readonly #api: ApiClient;

  constructor(api: ApiClient) {
    this.#api = api;
  }

  /** The snapshots (all pages), optionally of one sandbox or with one name. */
  async list(
    options: RequestOptions & { sandboxId?: string; name?: string } = {},
  ): Promise<SnapshotInfo[]> {
    const out: SnapshotInfo[] = [];
    let nextToken: string | undefined;
    do {
      const answer = await this.#api.call({
        ...options,
        method: 'GET',
        path: '/snapshots',
        query: { sandboxID: options.sandboxId, name: options.name, limit: 100, nextToken },
        feature,
      });
      out.push(...expectJson<SnapshotWire[]>(answer, 'list snapshots', true).map(toSnapshotInfo));
      nextToken = answer.headers.get('x-next-token') ?? undefined;
    } while (nextToken !== undefined && nextToken !== '');
    return out;
  }

  /** A snapshot by id or name. @throws {SnapshotNotFoundError} */
  async get(id: string, options: RequestOptions = {}): Promise<SnapshotInfo> {
    const answer = await this.#api.call({
      ...options,
      method: 'GET',
      path: pathOf`/snapshots/${id}`,
      feature,
    });
    return toSnapshotInfo(expectJson<SnapshotWire>(answer, 'get snapshot'));
  }

  /** Deletes a snapshot; false when there was none. */
  async delete(id: string, options: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#api.call({
        ...options,
        method: 'DELETE',
        path: pathOf`/snapshots/${id}`,
        feature,
      });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError && !(err instanceof NotSupportedError)) return false;
      throw err;
    }
  }
}
