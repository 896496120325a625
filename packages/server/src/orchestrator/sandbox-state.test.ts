import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import {
  OPERATION_SOURCES,
  SANDBOX_STATES,
  SANDBOX_TRANSITIONS,
  assertOperation,
  assertTransition,
  canTransition,
  e2bState,
} from './sandbox-state.js';

describe('sandbox state machine', () => {
  it('has a row for every state, naming only known states', () => {
    assert.deepEqual(Object.keys(SANDBOX_TRANSITIONS).sort(), [...SANDBOX_STATES].sort());
    for (const targets of Object.values(SANDBOX_TRANSITIONS)) {
      for (const t of targets) assert.ok(SANDBOX_STATES.includes(t), t);
    }
  });

  it('makes killed terminal and reachable only through killing', () => {
    assert.deepEqual(SANDBOX_TRANSITIONS.killed, []);
    const into = SANDBOX_STATES.filter((s) => canTransition(s, 'killed'));
    assert.deepEqual(into, ['killing']);
  });

  it('reaches killed from every state (every sandbox can be cleaned up)', () => {
    const reach = (from: string, seen = new Set<string>()): boolean => {
      if (from === 'killed') return true;
      if (seen.has(from)) return false;
      seen.add(from);
      return SANDBOX_TRANSITIONS[from as keyof typeof SANDBOX_TRANSITIONS].some((t) =>
        reach(t, seen),
      );
    };
    for (const s of SANDBOX_STATES) assert.ok(reach(s), `${s} cannot reach killed`);
  });

  it('starts each operation only from states whose table allows its first step', () => {
    const firstStep = {
      pause: 'pausing',
      resume: 'resuming',
      snapshot: 'snapshotting',
      fork: 'forking',
      kill: 'killing',
    } as const;
    for (const [op, to] of Object.entries(firstStep)) {
      for (const from of OPERATION_SOURCES[op as keyof typeof firstStep]) {
        assert.ok(canTransition(from, to), `${op} from ${from}`);
      }
    }
  });

  it('refuses an operation from a wrong state with a 409 naming the state', () => {
    assert.doesNotThrow(() => assertOperation('s1', 'pause', 'running'));
    assert.throws(
      () => assertOperation('s1', 'pause', 'paused'),
      (err: unknown) =>
        err instanceof AenvError &&
        err.code === 'SBX_INVALID_STATE' &&
        err.category === 'FailedPrecondition' &&
        /it is paused/.test(err.message),
    );
    assert.throws(() => assertOperation('s1', 'resume', 'running'), /it is running/);
    assert.throws(() => assertTransition('s1', 'paused', 'running'), /illegal state transition/);
  });

  it('maps internal states to the two E2B states', () => {
    assert.equal(e2bState('paused'), 'paused');
    assert.equal(e2bState('pausing'), 'paused');
    assert.equal(e2bState('resuming'), 'running');
    assert.equal(e2bState('forking'), 'running');
  });
});
