/**
 * `ImageSpec`: what an image is — a virtual size and an ordered list of
 * layer digests, base first. It is plain JSON, so it can be stored in a
 * snapshot manifest or sent to the NBD worker thread.
 *
 * Reads resolve top-down: the writable upper (if any), then the last layer
 * of `layers`, down to the first; bytes no level holds read as zeros.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { AenvError } from '@aenv/shared';
import { digestHex } from '../digest.js';

/** The default and, for now, only block size of images (bytes). */
export const DEFAULT_BLOCK_SIZE = 4096;

/** An image: a virtual size and its layers, base first. */
export interface ImageSpec {
  /** Size of the disk in bytes. May exceed the layers' own sizes (a grown disk). */
  readonly virtualSize: number;
  /** Layer digests (`sha256:<hex>`), base first. */
  readonly layers: readonly string[];
  /** Block size in bytes. @default 4096 */
  readonly blockSize?: number;
}

/**
 * Checks an image spec and returns it with defaults filled in.
 * @throws {AenvError} `INVALID_ARGUMENT` naming the bad field.
 */
export function normalizeImageSpec(spec: ImageSpec): Required<ImageSpec> {
  const blockSize = spec.blockSize ?? DEFAULT_BLOCK_SIZE;
  if (!Number.isInteger(blockSize) || blockSize < 512 || (blockSize & (blockSize - 1)) !== 0) {
    throw invalid(`blockSize must be a power of two >= 512, got ${blockSize}`);
  }
  if (!Number.isSafeInteger(spec.virtualSize) || spec.virtualSize <= 0) {
    throw invalid(`virtualSize must be a positive integer, got ${spec.virtualSize}`);
  }
  const layers: unknown = spec.layers;
  if (!Array.isArray(layers)) throw invalid('layers must be an array of digests');
  const digests = layers.map((d: unknown) => String(d));
  for (const d of digests) digestHex(d);
  return { virtualSize: spec.virtualSize, layers: digests, blockSize };
}

/** The identity of a stack an upper sits on: sha256 hex over the spec. */
export function stackHash(spec: Required<ImageSpec>): string {
  const text = JSON.stringify([spec.virtualSize, spec.blockSize, spec.layers]);
  return createHash('sha256').update(text).digest('hex');
}

function invalid(message: string): AenvError {
  return new AenvError('INVALID_ARGUMENT', `image spec: ${message}`);
}
