import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLifecycle } from './lifecycle-settings.js';

describe('parseLifecycle', () => {
  it('uses the node default when autoPause is absent', () => {
    assert.deepEqual(parseLifecycle({}, 'pause'), {
      onTimeout: 'pause',
      keepMemory: true,
      autoResume: false,
    });
    assert.equal(parseLifecycle({}, 'kill').onTimeout, 'kill');
  });

  it('follows what the e2b SDK sends', () => {
    assert.equal(parseLifecycle({ autoPause: false }, 'pause').onTimeout, 'kill');
    assert.deepEqual(parseLifecycle({ autoPause: true, autoResume: { enabled: true } }, 'kill'), {
      onTimeout: 'pause',
      keepMemory: true,
      autoResume: true,
    });
    assert.equal(
      parseLifecycle({ autoPause: true, autoPauseMemory: false }, 'kill').keepMemory,
      false,
    );
  });

  it('refuses contradictions and wrong types naming the field', () => {
    assert.throws(
      () => parseLifecycle({ autoPause: false, autoResume: { enabled: true } }, 'pause'),
      /'autoResume'/,
    );
    assert.throws(
      () => parseLifecycle({ autoPauseMemory: false, autoResume: { enabled: true } }, 'pause'),
      /'autoResume'/,
    );
    assert.throws(() => parseLifecycle({ autoPause: 'yes' }, 'pause'), /'autoPause'/);
    assert.throws(() => parseLifecycle({ autoResume: 3 }, 'pause'), /'autoResume'/);
  });
});
