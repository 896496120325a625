/**
 * Files uploaded for COPY steps: E2B's files-hash flow (`GET
 * /templates/{id}/files/{hash}` says whether the node has them and where
 * to `PUT` them: a tar, usually gzipped, of the files one COPY names) and
 * the build contexts of Dockerfile builds. Uploads go to a temporary file
 * and are renamed into place when complete, so a file named by its hash is
 * whole. They are kept for later builds (the hash covers contents and
 * paths); contexts are deleted with their build.
 *
 * @module
 */
import { createWriteStream } from 'node:fs';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import { AenvError, newId } from '@aenv/shared';

const HASH = /^[A-Za-z0-9]{16,128}$/;

/** The node's store of uploaded build files. */
export class BuildFiles {
  readonly #dir: string;
  readonly #maxBytes: number;

  constructor(dir: string, maxBytes: number) {
    this.#dir = dir;
    this.#maxBytes = maxBytes;
  }

  /**
   * The file of a hash.
   * @throws {AenvError} `API_BODY_INVALID` for a malformed hash.
   */
  path(hash: string): string {
    if (!HASH.test(hash)) {
      throw new AenvError('API_BODY_INVALID', `'${hash}' is not a files hash`, {
        fields: { field: 'hash' },
      });
    }
    return join(this.#dir, `${hash}.tar`);
  }

  /** Whether the files of a hash were uploaded. */
  async has(hash: string): Promise<boolean> {
    return access(this.path(hash)).then(
      () => true,
      () => false,
    );
  }

  /**
   * The archive of a hash.
   * @throws {AenvError} `BUILD_FILES_MISSING`.
   */
  async archive(hash: string): Promise<string> {
    if (!(await this.has(hash))) {
      throw new AenvError('BUILD_FILES_MISSING', `no files were uploaded for hash ${hash}`, {
        fields: { hash },
      });
    }
    return this.path(hash);
  }

  /** Stores an upload under `hash`. */
  async put(hash: string, body: Readable): Promise<void> {
    await this.#receive(body, this.path(hash));
  }

  /** Stores a build context; returns its file (delete it with {@link remove}). */
  async putContext(body: Readable): Promise<string> {
    const file = join(this.#dir, 'contexts', `${newId()}.tar`);
    await this.#receive(body, file);
    return file;
  }

  /** Deletes a context. */
  async remove(file: string): Promise<void> {
    await rm(file, { force: true });
  }

  async #receive(body: Readable, file: string): Promise<void> {
    await mkdir(join(this.#dir, 'contexts'), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${newId()}.part`;
    let size = 0;
    const max = this.#maxBytes;
    const limit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > max) {
          done(
            new AenvError(
              'API_BODY_INVALID',
              `upload exceeds ${Math.round(max / 2 ** 20)} MiB (template.maxUploadMiB)`,
            ),
          );
          return;
        }
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, limit, createWriteStream(tmp, { mode: 0o600 }));
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
}
