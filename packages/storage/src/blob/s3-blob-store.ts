/**
 * `S3BlobStore`: blobs as objects in an S3-compatible bucket (AWS S3,
 * MinIO, Ceph RGW, s3rver...), through `@aws-sdk/client-s3`.
 *
 * - Addressing: path-style (`endpoint/bucket/key`, the default when a
 *   custom endpoint is given) or virtual-host-style (`bucket.endpoint/key`).
 * - Keys are stored under an optional `prefix` inside the bucket.
 * - `put` of more than `partSize` bytes uses a multipart upload (parts are
 *   uploaded one after another, so memory stays at one part); a failed
 *   upload is aborted so no parts are left behind.
 * - `getRange` is a ranged GET: lazy layer loading fetches exactly the
 *   chunks it needs.
 * - Checksums are only sent where S3 requires them: several S3-compatible
 *   servers reject the SDK's default streaming checksums.
 * - An unreachable store fails fast: connecting and waiting for the next
 *   byte are both bounded, and so are the SDK's retries, so a request to a
 *   store that is down or black-holed ends in `BLOB_STORE_UNAVAILABLE`
 *   (naming the bucket and endpoint) within seconds instead of hanging a
 *   create until the client gives up. Nothing is cached about the outage:
 *   the next request tries again, so a store that comes back is used at once.
 *
 * @module
 */
import { open, stat } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { AenvError } from '@aenv/shared';
import {
  assertBlobKey,
  assertRange,
  blobNotFound,
  rangePastEnd,
  type BlobBody,
  type BlobInfo,
  type BlobStore,
} from './blob-store.js';

/** Options of {@link S3BlobStore}. */
export interface S3BlobStoreOptions {
  readonly bucket: string;
  /** Prefix of every key inside the bucket, e.g. `aenv/`. @default '' */
  readonly prefix?: string;
  /** Endpoint URL of an S3-compatible server. @default AWS */
  readonly endpoint?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** Path-style addressing. @default true when `endpoint` is set, else false */
  readonly forcePathStyle?: boolean;
  /** Static credentials. @default the SDK's provider chain */
  readonly credentials?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
  /** Multipart part size and threshold in bytes (>= 5 MiB). @default 16 MiB */
  readonly partSize?: number;
  /** Most milliseconds to open a connection. @default 2000 */
  readonly connectTimeoutMs?: number;
  /** Most milliseconds a request may wait for its next byte. @default 5000 */
  readonly idleTimeoutMs?: number;
  /** Attempts per request, the first included (the SDK retries with backoff). @default 3 */
  readonly maxAttempts?: number;
  /** Further client settings (e.g. a request handler, replacing the timeouts above), merged last. */
  readonly clientConfig?: S3ClientConfig;
}

/** Defaults of the fail-fast bounds of {@link S3BlobStoreOptions}. */
export const S3_FAIL_FAST_DEFAULTS = {
  connectTimeoutMs: 2000,
  idleTimeoutMs: 5000,
  maxAttempts: 3,
} as const;

/** A blob store in an S3-compatible bucket. */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #partSize: number;
  readonly #where: string;

  constructor(options: S3BlobStoreOptions) {
    const d = S3_FAIL_FAST_DEFAULTS;
    this.#bucket = options.bucket;
    this.#prefix = options.prefix ?? '';
    this.#partSize = Math.max(options.partSize ?? 16 << 20, 5 << 20);
    this.#where = `s3://${this.#bucket}/${this.#prefix} at ${options.endpoint ?? 'AWS'}`;
    this.#client = new S3Client({
      region: options.region ?? 'us-east-1',
      maxAttempts: options.maxAttempts ?? d.maxAttempts,
      requestHandler: {
        connectionTimeout: options.connectTimeoutMs ?? d.connectTimeoutMs,
        // An idle bound, not a total one: a large upload may take long, a
        // stalled one may not. (`requestTimeout` only warns unless told to throw.)
        socketTimeout: options.idleTimeoutMs ?? d.idleTimeoutMs,
      },
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...options.clientConfig,
    });
  }

  async put(key: string, body: BlobBody): Promise<BlobInfo> {
    const Key = this.#key(key);
    try {
      if (body instanceof Uint8Array) return await this.#putBytes(key, Key, body);
      if (body instanceof Readable) return await this.#putStream(key, Key, body);
      return await this.#putFile(key, Key, body.path);
    } catch (err) {
      throw this.#wrap(err, key);
    }
  }

  async get(key: string): Promise<Readable> {
    try {
      const res = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
      );
      return res.Body as Readable;
    } catch (err) {
      throw this.#wrap(err, key);
    }
  }

  async getRange(key: string, offset: number, length: number): Promise<Buffer> {
    assertRange(key, offset, length);
    if (length === 0) {
      const info = await this.head(key);
      if (info === undefined) throw blobNotFound(key);
      if (offset > info.size) throw rangePastEnd(key, offset, length, info.size);
      return Buffer.alloc(0);
    }
    let bytes: Uint8Array;
    try {
      const res = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#key(key),
          Range: `bytes=${offset}-${offset + length - 1}`,
        }),
      );
      bytes = await (
        res.Body as { transformToByteArray(): Promise<Uint8Array> }
      ).transformToByteArray();
    } catch (err) {
      if (statusOf(err) === 416) throw rangePastEnd(key, offset, length, Number.NaN);
      throw this.#wrap(err, key);
    }
    if (bytes.length !== length) throw rangePastEnd(key, offset, length, offset + bytes.length);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    try {
      const res = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
      );
      return { key, size: res.ContentLength ?? 0 };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw this.#wrap(err, key);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.#client.send(
        new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
      );
    } catch (err) {
      if (statusOf(err) !== 404) throw this.#wrap(err, key);
    }
  }

  async *list(prefix = ''): AsyncIterable<BlobInfo> {
    let token: string | undefined;
    do {
      let res;
      try {
        res = await this.#client.send(
          new ListObjectsV2Command({
            Bucket: this.#bucket,
            Prefix: this.#prefix + prefix,
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        );
      } catch (err) {
        throw this.#wrap(err, prefix);
      }
      for (const o of res.Contents ?? []) {
        if (o.Key === undefined) continue;
        yield { key: o.Key.slice(this.#prefix.length), size: o.Size ?? 0 };
      }
      token = res.IsTruncated === true ? res.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  close(): Promise<void> {
    this.#client.destroy();
    return Promise.resolve();
  }

  #key(key: string): string {
    assertBlobKey(key);
    return this.#prefix + key;
  }

  async #putBytes(key: string, Key: string, body: Uint8Array): Promise<BlobInfo> {
    if (body.length > this.#partSize)
      return this.#multipart(key, Key, chunksOf(body, this.#partSize));
    await this.#client.send(
      new PutObjectCommand({ Bucket: this.#bucket, Key, Body: body, ContentLength: body.length }),
    );
    return { key, size: body.length };
  }

  async #putFile(key: string, Key: string, path: string): Promise<BlobInfo> {
    const size = (await stat(path)).size;
    if (size > this.#partSize)
      return this.#multipart(key, Key, fileParts(path, size, this.#partSize));
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key,
        Body: createReadStream(path),
        ContentLength: size,
      }),
    );
    return { key, size };
  }

  async #putStream(key: string, Key: string, body: Readable): Promise<BlobInfo> {
    const parts = streamParts(body, this.#partSize);
    const first = await parts.next();
    const firstPart = first.done === true ? Buffer.alloc(0) : first.value;
    if (firstPart.length < this.#partSize) return this.#putBytes(key, Key, firstPart);
    return this.#multipart(key, Key, prepend(firstPart, parts));
  }

  async #multipart(
    key: string,
    Key: string,
    parts: AsyncIterable<Buffer> | Iterable<Buffer>,
  ): Promise<BlobInfo> {
    const Bucket = this.#bucket;
    const { UploadId } = await this.#client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    const done: { ETag: string; PartNumber: number }[] = [];
    let size = 0;
    try {
      for await (const Body of parts) {
        const PartNumber = done.length + 1;
        const res = await this.#client.send(
          new UploadPartCommand({
            Bucket,
            Key,
            UploadId,
            PartNumber,
            Body,
            ContentLength: Body.length,
          }),
        );
        done.push({ ETag: res.ETag ?? '', PartNumber });
        size += Body.length;
      }
      await this.#client.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key,
          UploadId,
          MultipartUpload: { Parts: done },
        }),
      );
    } catch (err) {
      await this.#client
        .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }))
        .catch(() => undefined);
      throw err;
    }
    return { key, size };
  }

  #wrap(err: unknown, key: string): AenvError {
    if (err instanceof AenvError) return err;
    // A missing bucket is a configuration problem, not a missing blob.
    const missingBlob =
      nameOf(err) === 'NoSuchKey' || (statusOf(err) === 404 && nameOf(err) !== 'NoSuchBucket');
    if (missingBlob) return blobNotFound(key, err);
    const detail = err instanceof Error ? err.message || err.name : String(err);
    return new AenvError(
      'BLOB_STORE_UNAVAILABLE',
      `blob store ${this.#where} is unavailable (${key}): ${detail}`,
      { cause: err, fields: { store: this.#where, key } },
    );
  }
}

function statusOf(err: unknown): number | undefined {
  const meta = (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata;
  return meta?.httpStatusCode;
}

function nameOf(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

function* chunksOf(body: Uint8Array, size: number): Generator<Buffer> {
  for (let o = 0; o < body.length; o += size) {
    const part = body.subarray(o, Math.min(o + size, body.length));
    yield Buffer.from(part.buffer, part.byteOffset, part.byteLength);
  }
}

async function* fileParts(path: string, size: number, partSize: number): AsyncGenerator<Buffer> {
  const fh = await open(path, 'r');
  try {
    for (let o = 0; o < size; o += partSize) {
      const buf = Buffer.allocUnsafe(Math.min(partSize, size - o));
      const { bytesRead } = await fh.read(buf, 0, buf.length, o);
      if (bytesRead !== buf.length)
        throw new AenvError('INTERNAL', `${path} shrank while uploading`);
      yield buf;
    }
  } finally {
    await fh.close();
  }
}

async function* streamParts(body: Readable, partSize: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of body) {
    let data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    while (data.length > 0) {
      const take = Math.min(partSize - pendingBytes, data.length);
      pending.push(data.subarray(0, take));
      pendingBytes += take;
      data = data.subarray(take);
      if (pendingBytes === partSize) {
        yield Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
      }
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending);
}

async function* prepend(first: Buffer, rest: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  yield first;
  yield* rest;
}
