/**
 * Reading a byte range through a stack of levels, top-down.
 *
 * The range is widened to whole blocks and asked of the top level; what it
 * reports `absent` is asked of the next level, and so on. Data and zero
 * segments are clipped back to the requested bytes and filled in; what no
 * level holds is zero (the bottom of every stack is an empty disk). The
 * data reads of all levels run concurrently.
 *
 * @module
 */
import type { StackLevel } from './stack-level.js';

/** Fills `target` from `[offset, offset + target.length)` of the stack `levels` (top first). */
export async function readStack(
  levels: readonly StackLevel[],
  target: Uint8Array,
  offset: number,
  blockSize: number,
): Promise<void> {
  const end = offset + target.length;
  if (target.length === 0) return;
  const first = Math.floor(offset / blockSize);
  let pending: [number, number][] = [[first, Math.ceil(end / blockSize) - first]];
  const reads: Promise<void>[] = [];
  const clip = (block: number, count: number) => {
    const s = Math.max(block * blockSize, offset);
    const e = Math.min((block + count) * blockSize, end);
    return { at: s - block * blockSize, dst: target.subarray(s - offset, e - offset) };
  };
  for (const level of levels) {
    const next: [number, number][] = [];
    for (const [block, count] of pending) {
      for (const seg of level.resolve(block, count)) {
        if (seg.kind === 'absent') {
          next.push([seg.block, seg.count]);
          continue;
        }
        const { at, dst } = clip(seg.block, seg.count);
        if (seg.kind === 'zero') dst.fill(0);
        else reads.push(level.readData(dst, seg.ref + at));
      }
    }
    pending = next;
    if (pending.length === 0) break;
  }
  for (const [block, count] of pending) clip(block, count).dst.fill(0);
  const results = await Promise.allSettled(reads);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}
