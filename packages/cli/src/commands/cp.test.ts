import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLocation } from './cp.js';

describe('cp locations', () => {
  it('are ID:PATH in a sandbox, anything else local', () => {
    assert.deepEqual(parseLocation('4kq2m9x8a1b2c3d4e5f6:/home/user/a'), {
      kind: 'remote',
      id: '4kq2m9x8a1b2c3d4e5f6',
      path: '/home/user/a',
    });
    assert.deepEqual(parseLocation('abc:rel/path'), {
      kind: 'remote',
      id: 'abc',
      path: 'rel/path',
    });
    assert.deepEqual(parseLocation('./a:b'), { kind: 'local', path: './a:b' });
    assert.deepEqual(parseLocation('/tmp/x:y'), { kind: 'local', path: '/tmp/x:y' });
    assert.deepEqual(parseLocation('-'), { kind: 'local', path: '-' });
    assert.throws(() => parseLocation('abc:'), /names no path/);
  });
});
