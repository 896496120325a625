/**
 * `FsBlobStore`: blobs as files under a root directory (the default store).
 *
 * A blob with key `a/b/c` is the file `<root>/a/b/c`. `put` writes a
 * temporary file under `<root>/.tmp/`, syncs it, renames it into place and
 * syncs the directory, so a blob is either absent or complete, even after a
 * crash. The store offers `localPath()`: readers of uncompressed layer
 * chunks `pread` the file directly, with no copy into a cache. The files
 * are trusted as they are (they were verified or built locally).
 *
 * @module
 */
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { toAenvError } from '@aenv/shared';
import { errnoOf, fsError, syncDir } from '../file-io.js';
import {
  assertBlobKey,
  assertRange,
  blobNotFound,
  rangePastEnd,
  type BlobBody,
  type BlobInfo,
  type BlobStore,
} from './blob-store.js';

/** A blob store in a local directory. */
export class FsBlobStore implements BlobStore {
  readonly kind = 'fs';
  /** The root directory. */
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  localPath(key: string): string {
    assertBlobKey(key);
    return join(this.root, key);
  }

  async put(key: string, body: BlobBody): Promise<BlobInfo> {
    const target = this.localPath(key);
    const tmpDir = join(this.root, '.tmp');
    const tmp = join(tmpDir, randomUUID());
    try {
      await mkdir(tmpDir, { recursive: true });
      await writeBody(tmp, body);
      await mkdir(dirname(target), { recursive: true });
      await rename(tmp, target);
      await syncDir(dirname(target));
      return { key, size: (await stat(target)).size };
    } catch (err) {
      await rm(tmp, { force: true });
      throw fsError(err, `storing blob ${key}`, 'BLOB_STORE_UNAVAILABLE');
    }
  }

  async get(key: string): Promise<Readable> {
    const path = this.localPath(key);
    const fh = await open(path, 'r').catch((err: unknown) => {
      throw this.#wrap(err, key);
    });
    return fh.createReadStream();
  }

  async getRange(key: string, offset: number, length: number): Promise<Buffer> {
    assertRange(key, offset, length);
    const fh = await open(this.localPath(key), 'r').catch((err: unknown) => {
      throw this.#wrap(err, key);
    });
    try {
      const size = (await fh.stat()).size;
      if (offset + length > size) throw rangePastEnd(key, offset, length, size);
      const buf = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
        if (bytesRead === 0) throw rangePastEnd(key, offset, length, offset + done);
        done += bytesRead;
      }
      return buf;
    } finally {
      await fh.close();
    }
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    try {
      const st = await stat(this.localPath(key));
      return st.isFile() ? { key, size: st.size } : undefined;
    } catch (err) {
      if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return undefined;
      throw this.#wrap(err, key);
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.localPath(key), { force: true }).catch((err: unknown) => {
      throw this.#wrap(err, key);
    });
  }

  async *list(prefix = ''): AsyncIterable<BlobInfo> {
    const found: BlobInfo[] = [];
    await this.#walk(this.root, prefix, found);
    found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    yield* found;
  }

  async #walk(dir: string, prefix: string, out: BlobInfo[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return;
      throw this.#wrap(err, prefix);
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      const key = relative(this.root, path).split(sep).join('/');
      if (key === '.tmp') continue;
      if (e.isDirectory()) {
        if (prefix.startsWith(`${key}/`) || key.startsWith(prefix))
          await this.#walk(path, prefix, out);
      } else if (e.isFile() && key.startsWith(prefix)) {
        out.push({ key, size: (await stat(path)).size });
      }
    }
  }

  #wrap(err: unknown, key: string) {
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR' || errnoOf(err) === 'EISDIR') {
      return blobNotFound(key, err);
    }
    return toAenvError(err, 'BLOB_STORE_UNAVAILABLE', `blob ${key}`);
  }
}

async function writeBody(tmp: string, body: BlobBody): Promise<void> {
  if (body instanceof Uint8Array) {
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(body);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    return;
  }
  if (body instanceof Readable) {
    await pipeline(body, createWriteStream(tmp));
  } else {
    await copyFile(body.path, tmp);
  }
  const fh = await open(tmp, 'r+');
  try {
    await fh.datasync();
  } finally {
    await fh.close();
  }
}
