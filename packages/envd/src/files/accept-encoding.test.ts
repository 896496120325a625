/**
 * Unit tests for {@link chooseEncoding}.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseEncoding } from './accept-encoding.js';

describe('chooseEncoding', () => {
  it('prefers gzip when accepted', () => {
    assert.equal(chooseEncoding('gzip'), 'gzip');
    assert.equal(chooseEncoding('br, gzip;q=0.5'), 'gzip');
    assert.equal(chooseEncoding('*'), 'gzip');
  });

  it('falls back to identity', () => {
    assert.equal(chooseEncoding(undefined), 'identity');
    assert.equal(chooseEncoding('br'), 'identity');
    assert.equal(chooseEncoding('gzip;q=0'), 'identity');
  });

  it('refuses when nothing acceptable remains', () => {
    assert.equal(chooseEncoding('br, identity;q=0'), undefined);
    assert.equal(chooseEncoding('br, *;q=0'), undefined);
  });
});
