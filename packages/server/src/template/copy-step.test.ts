import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copyTarget } from './copy-step.js';

describe('COPY targets (Docker rules)', () => {
  it('copies a literal file to dest, or into dest/', () => {
    assert.equal(copyTarget('a.txt', false, 'a.txt', '/app/b.txt'), '/app/b.txt');
    assert.equal(copyTarget('a.txt', false, './a.txt', '/app/'), '/app/a.txt');
    assert.equal(copyTarget('sub/a.txt', false, 'sub/a.txt', '/app/'), '/app/a.txt');
    assert.equal(copyTarget('b.txt', false, 'a.txt', '/app/'), undefined);
  });

  it("copies a directory's contents into dest", () => {
    assert.equal(copyTarget('src', true, 'src', '/app'), '/app');
    assert.equal(copyTarget('src/x/y.js', false, 'src/', '/app'), '/app/x/y.js');
    assert.equal(copyTarget('srcx/y.js', false, 'src', '/app'), undefined);
    assert.equal(copyTarget('any/thing', false, '.', '/ctx'), '/ctx/any/thing');
  });

  it('copies glob matches into dest/', () => {
    assert.equal(copyTarget('a.txt', false, '*.txt', '/d/'), '/d/a.txt');
    assert.equal(copyTarget('lib/z.txt', false, '*.txt', '/d/'), undefined);
    assert.equal(copyTarget('lib/z.txt', false, '**/*.txt', '/d/'), '/d/z.txt');
    assert.equal(copyTarget('pkg1', true, 'pkg?', '/d'), '/d');
    assert.equal(copyTarget('pkg1/f', false, 'pkg?', '/d'), '/d/f');
  });
});
