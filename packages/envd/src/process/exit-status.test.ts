/**
 * Unit tests for the Go-style end event of {@link exitInfo}.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exitInfo, signalName } from './exit-status.js';

describe('exitInfo', () => {
  it('describes exits and signals as E2B envd does', () => {
    assert.deepEqual(exitInfo(0, null), { exitCode: 0, exited: true, status: 'exit status 0' });
    assert.deepEqual(exitInfo(3, null), {
      exitCode: 3,
      exited: true,
      status: 'exit status 3',
      error: 'exit status 3',
    });
    assert.deepEqual(exitInfo(null, 'SIGKILL'), {
      exitCode: -1,
      exited: false,
      status: 'signal: killed',
      error: 'signal: killed',
    });
    assert.equal(exitInfo(null, 'SIGTERM').status, 'signal: terminated');
  });

  it('names signal numbers', () => {
    assert.equal(signalName(9), 'SIGKILL');
    assert.equal(signalName(15), 'SIGTERM');
    assert.equal(signalName(999), undefined);
  });
});
