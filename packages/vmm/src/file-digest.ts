/**
 * SHA-256 digests of boot files (kernel, initrd), remembered per file
 * identity so the restore hot path does not re-hash a 50 MB kernel.
 *
 * Contract: a cached digest is reused only while the file's device, inode,
 * size and modification time are unchanged; any change re-hashes it.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

const cache = new Map<string, { identity: string; digest: string }>();

/**
 * `sha256:<hex>` of the file at `path`.
 * @throws the filesystem error when it cannot be read.
 */
export async function fileDigest(path: string): Promise<string> {
  const s = await stat(path);
  const identity = `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  const hit = cache.get(path);
  if (hit?.identity === identity) return hit.digest;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  const digest = `sha256:${hash.digest('hex')}`;
  cache.set(path, { identity, digest });
  return digest;
}
