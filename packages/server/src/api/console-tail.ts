/**
 * The last lines of a sandbox's VM console log. The VMM keeps the log
 * bounded by rotating it to `<log>.1`, so the tail may start in the
 * rotated file. At most the last {@link MAX_TAIL_BYTES} of each file are
 * read, whatever the log's bound.
 *
 * @module
 */
import { open } from 'node:fs/promises';

/** Most bytes read from each file. */
export const MAX_TAIL_BYTES = 1024 * 1024;

async function lastBytes(path: string): Promise<Buffer> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
  try {
    const { size } = await file.stat();
    const length = Math.min(size, MAX_TAIL_BYTES);
    const buf = Buffer.alloc(length);
    const { bytesRead } = await file.read(buf, 0, length, size - length);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * The last `lines` lines of `<path>.1` followed by `<path>` (missing files
 * count as empty). The text keeps the console's own line endings.
 */
export async function tailConsoleLog(path: string, lines: number): Promise<string> {
  const current = await lastBytes(path);
  const rotated = await lastBytes(`${path}.1`);
  const text = Buffer.concat([rotated, current]).toString('utf8');
  const parts = text.split('\n');
  // A trailing newline leaves an empty last part that is not a line.
  const complete = parts[parts.length - 1] === '' ? parts.length - 1 : parts.length;
  return parts.slice(Math.max(0, complete - lines)).join('\n');
}
