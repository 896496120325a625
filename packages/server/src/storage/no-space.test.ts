/**
 * `noSpaceOr`: full-disk errors of other layers become `STORAGE_NO_SPACE`;
 * everything else passes through untouched.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { isNoSpace, noSpaceOr } from './no-space.js';

describe('noSpaceOr', () => {
  it('maps a VMM error caused by ENOSPC to STORAGE_NO_SPACE, keeping the cause', () => {
    const qemu = new AenvError('VMM_SNAPSHOT_FAILED', 'migration failed', {
      cause: new Error('Unable to write to file: No space left on device'),
    });
    const mapped = noSpaceOr(qemu, 'pausing sbx1');
    assert.ok(mapped instanceof AenvError);
    assert.equal(mapped.code, 'STORAGE_NO_SPACE');
    assert.equal(mapped.cause, qemu);
    const errno = Object.assign(new Error('write failed'), { code: 'ENOSPC' });
    assert.equal(isNoSpace(errno), true);
  });

  it('passes other errors and STORAGE_NO_SPACE itself through', () => {
    const other = new AenvError('VMM_SNAPSHOT_FAILED', 'migration failed: broken pipe');
    assert.equal(noSpaceOr(other, 'x'), other);
    const already = new AenvError('STORAGE_NO_SPACE', 'full');
    assert.equal(noSpaceOr(already, 'x'), already);
    assert.equal(isNoSpace(undefined), false);
  });
});
