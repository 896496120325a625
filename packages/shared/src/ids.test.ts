import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from './aenv-error.js';
import { ID_LENGTH, assertName, isId, isName, newApiKey, newId, newToken } from './ids.js';

describe('ids', () => {
  it('generates distinct, host-label-safe ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId()));
    assert.equal(ids.size, 1000);
    for (const id of ids) {
      assert.equal(id.length, ID_LENGTH);
      assert.ok(isId(id));
      assert.ok(!id.includes('-') && !id.includes('.'));
    }
    assert.ok(!isId('ABC'));
  });

  it('issues API keys the e2b SDKs accept', () => {
    assert.match(newApiKey(), /^e2b_[0-9a-f]{40}$/);
    assert.notEqual(newApiKey(), newApiKey());
    assert.match(newToken(), /^[0-9a-f]{64}$/);
  });

  it('validates user-given names with a clear error', () => {
    assert.ok(isName('my-template_2'));
    for (const bad of ['', '-x', 'has.dot', 'Upper', 'a'.repeat(64)]) {
      assert.ok(!isName(bad), bad);
    }
    assert.throws(
      () => assertName('template', 'bad.name'),
      (err: unknown) =>
        err instanceof AenvError &&
        err.code === 'ID_INVALID' &&
        /template name "bad.name"/.test(err.message),
    );
  });
});
