/**
 * Reading a downloaded layer blob as its uncompressed tar stream, whatever
 * its compression (recognised by magic bytes, not trusted from the media
 * type): gzip through zlib, zstd through the `zstd` tool (Node 20's zlib
 * has no zstd), plain tar as is. The uncompressed bytes are hashed on the
 * way, so the caller can check them against the config's `diff_id`.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AenvError } from '@aenv/shared';
import type { LayerCompression } from './oci-manifest.js';

/** An open layer stream. */
export interface LayerStream {
  /** The uncompressed tar bytes. Iterate once. */
  readonly chunks: AsyncIterable<Buffer>;
  /** sha256 of every uncompressed byte read so far (call after draining). */
  digest(): string;
  /** Drains what the tar reader left (end-of-archive padding) into the digest. */
  drain(): Promise<void>;
  /** Stops reading (on failure); idempotent. */
  close(): void;
}

/** The compression of a blob, from its first bytes. */
export async function sniffCompression(file: string): Promise<LayerCompression> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await fh.read(head, 0, 4, 0);
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
    if (bytesRead === 4 && head.readUInt32LE(0) === 0xfd2fb528) return 'zstd';
    return 'none';
  } finally {
    await fh.close();
  }
}

/**
 * Opens a blob file as an uncompressed stream.
 * @param onCompressedBytes reports how much of the blob has been read (progress).
 */
export async function openLayerStream(
  file: string,
  onCompressedBytes?: (bytes: number) => void,
): Promise<LayerStream> {
  const compression = await sniffCompression(file);
  const file$ = createReadStream(file, { highWaterMark: 1 << 20 });
  let read = 0;
  const input = new Transform({
    transform(chunk: Buffer, _enc, done) {
      read += chunk.length;
      onCompressedBytes?.(read);
      done(null, chunk);
    },
  });
  file$.on('error', (err) => input.destroy(err));
  file$.pipe(input);
  const hash = createHash('sha256');
  let source: AsyncIterable<Buffer>;
  let stop: () => void;
  if (compression === 'gzip') {
    const gunzip = createGunzip();
    input.pipe(gunzip);
    source = gunzip;
    stop = () => {
      file$.destroy();
      gunzip.destroy();
    };
  } else if (compression === 'zstd') {
    const z = zstdDecoder(input, () => file$.destroy());
    source = z.output;
    stop = z.stop;
  } else {
    source = input;
    stop = () => {
      file$.destroy();
      input.destroy();
    };
  }
  const iterator = (async function* (): AsyncGenerator<Buffer> {
    try {
      for await (const buf of source) {
        hash.update(buf);
        yield buf;
      }
    } catch (err) {
      if (err instanceof AenvError) throw err;
      throw new AenvError(
        'IMAGE_INVALID',
        `layer cannot be decompressed (${compression}): ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  })();
  return {
    chunks: { [Symbol.asyncIterator]: () => iterator },
    digest: () => `sha256:${hash.copy().digest('hex')}`,
    drain: async () => {
      for (;;) {
        const n = await iterator.next();
        if (n.done === true) return;
      }
    },
    close: () => {
      stop();
      void iterator.return(undefined);
    },
  };
}

function zstdDecoder(
  input: Transform,
  stopInput: () => void,
): { output: AsyncIterable<Buffer>; stop: () => void } {
  const child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  input.pipe(child.stdin);
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', (err) =>
      reject(
        new AenvError(
          'IMAGE_CONVERT_FAILED',
          'zstd is needed for zstd layers (Debian package zstd)',
          {
            cause: err,
          },
        ),
      ),
    );
    child.on('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  const output = (async function* (): AsyncGenerator<Buffer> {
    for await (const c of child.stdout) yield c as Buffer;
    const code = await exited;
    if (code !== 0)
      throw new AenvError('IMAGE_INVALID', `zstd could not decompress the layer: ${stderr.trim()}`);
  })();
  return {
    output,
    stop: () => {
      child.kill('SIGKILL');
      stopInput();
    },
  };
}
