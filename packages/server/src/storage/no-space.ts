/**
 * Recognizes a full host disk behind errors of other layers (a VMM that
 * could not write a memory snapshot, a tool that could not write a file),
 * so the API answers 507 `STORAGE_NO_SPACE` rather than 500. Only the error
 * chain's messages and errno codes are looked at; errors that are already
 * `STORAGE_NO_SPACE` or of another condition pass through unchanged.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

const NO_SPACE = /No space left on device|ENOSPC|EDQUOT|Disk quota exceeded/;

function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && out.length < 8;) {
    out.push(e);
    e = e instanceof Error ? e.cause : undefined;
  }
  return out;
}

/** Whether `err` (or one of its causes) is the disk running out of space. */
export function isNoSpace(err: unknown): boolean {
  return chain(err).some((e) => {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'STORAGE_NO_SPACE') return true;
    return e instanceof Error && NO_SPACE.test(e.message);
  });
}

/** `err` as `STORAGE_NO_SPACE` when the disk is full, else `err` itself. */
export function noSpaceOr(err: unknown, what: string): unknown {
  if (err instanceof AenvError && err.code === 'STORAGE_NO_SPACE') return err;
  if (!isNoSpace(err)) return err;
  return new AenvError('STORAGE_NO_SPACE', `${what}: the node's disk is full`, { cause: err });
}
