/**
 * Tests of {@link JailUidPool}: distinct ids while held, reuse after release.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JailUidPool } from './jail-uid-pool.js';

describe('JailUidPool', () => {
  it('gives each holder its own uid and gid, with the common group', () => {
    const pool = new JailUidPool(200000, 3);
    const a = pool.acquire();
    const b = pool.acquire();
    assert.deepEqual(a, { uid: 200001, gid: 200001, groups: [200000] });
    assert.equal(b.uid, 200002);
    assert.equal(pool.sharedGid, 200000);
    assert.equal(pool.inUse, 2);
  });

  it('refuses when the range is exhausted and reuses released ids', () => {
    const pool = new JailUidPool(1000, 2);
    const a = pool.acquire();
    pool.acquire();
    assert.throws(() => pool.acquire(), { code: 'VMM_JAIL_EXHAUSTED' });
    pool.release(a);
    pool.release(a);
    assert.equal(pool.inUse, 1);
    assert.equal(pool.acquire().uid, a.uid);
  });

  it('rejects ranges that include root or overflow', () => {
    assert.throws(() => new JailUidPool(0, 10), { code: 'INVALID_ARGUMENT' });
    assert.throws(() => new JailUidPool(4_294_967_290, 10), { code: 'INVALID_ARGUMENT' });
  });
});
