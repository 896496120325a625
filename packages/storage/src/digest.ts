/**
 * Layer digests: `sha256:<64 hex>` strings, and the blob-store key a layer
 * is stored under (`layers/sha256/<hex>`).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { AenvError } from '@aenv/shared';

const DIGEST = /^sha256:([0-9a-f]{64})$/;

/** Whether `value` is a well-formed layer digest. */
export function isDigest(value: unknown): value is string {
  return typeof value === 'string' && DIGEST.test(value);
}

/**
 * Checks a digest and returns its hex part.
 * @throws {AenvError} `INVALID_ARGUMENT` when malformed.
 */
export function digestHex(digest: string): string {
  const m = DIGEST.exec(digest);
  if (m === null) {
    throw new AenvError('INVALID_ARGUMENT', `not a layer digest: ${JSON.stringify(digest)}`, {
      fields: { digest },
    });
  }
  return m[1] as string;
}

/** The sha256 digest of the concatenation of `parts`. */
export function sha256Digest(...parts: readonly Uint8Array[]): string {
  const hash = createHash('sha256');
  for (const p of parts) hash.update(p);
  return `sha256:${hash.digest('hex')}`;
}

/** The blob-store key of a layer. */
export function layerKey(digest: string): string {
  return `layers/sha256/${digestHex(digest)}`;
}
