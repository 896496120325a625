import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { VM_STATES, VM_TRANSITIONS, VmStateMachine } from './vm-state.js';

describe('VmStateMachine', () => {
  it('follows the lifecycle: starting → running → paused → running → stopped', () => {
    const sm = new VmStateMachine('vm1');
    for (const s of [
      'running',
      'pausing',
      'paused',
      'resuming',
      'running',
      'stopping',
      'stopped',
    ] as const)
      sm.to(s);
    assert.equal(sm.state, 'stopped');
  });

  it('refuses an operation from the wrong state with VMM_INVALID_STATE naming the state', () => {
    const sm = new VmStateMachine('vm1', 'paused');
    assert.throws(
      () => sm.expect('pause', 'running'),
      (err: unknown) =>
        err instanceof AenvError &&
        err.code === 'VMM_INVALID_STATE' &&
        err.category === 'FailedPrecondition' &&
        /cannot pause VM vm1: it is paused/.test(err.message),
    );
    assert.doesNotThrow(() => sm.expect('resume', 'paused'));
  });

  it('rejects transitions the table does not allow', () => {
    const sm = new VmStateMachine('vm1', 'stopped');
    assert.throws(() => sm.to('running'), /illegal transition stopped → running/);
    const paused = new VmStateMachine('vm2', 'paused');
    assert.throws(() => paused.to('pausing'), /illegal transition/);
  });

  it('has a row for every state and lets every live state die', () => {
    assert.deepEqual(Object.keys(VM_TRANSITIONS).sort(), [...VM_STATES].sort());
    for (const s of VM_STATES)
      if (s !== 'stopped') assert.ok(VM_TRANSITIONS[s].includes('stopped'), s);
    assert.deepEqual(VM_TRANSITIONS.stopped, []);
  });
});
