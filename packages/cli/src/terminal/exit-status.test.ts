import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exitStatusOf } from './exit-status.js';

describe('exit status of a remote process', () => {
  it('is its code, or 128 + the signal that ended it', () => {
    const r = { stdout: '', stderr: '' };
    assert.equal(exitStatusOf({ ...r, exitCode: 0 }), 0);
    assert.equal(exitStatusOf({ ...r, exitCode: 3, error: 'exit status 3' }), 3);
    assert.equal(exitStatusOf({ ...r, exitCode: -1, error: 'signal: killed' }), 137);
    assert.equal(exitStatusOf({ ...r, exitCode: -1, error: 'signal: terminated' }), 143);
    assert.equal(exitStatusOf({ ...r, exitCode: -1, error: 'something else' }), 1);
  });
});
