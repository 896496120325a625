/**
 * Crash points: the variable is checked against the closed list, and an
 * armed point kills a real process with SIGKILL at once while other points
 * pass through.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AenvError } from '@aenv/shared';
import { CRASH_POINTS, parseCrashPoint, recordedPoint } from './crash-point.js';

const MODULE = fileURLToPath(new URL('./crash-point.js', import.meta.url));

/** Runs a child that calls `crashPoint(name)` then prints "survived". */
function runWith(armed: string, name: string): ReturnType<typeof spawnSync> {
  const script = `const m = await import(${JSON.stringify(MODULE)}); m.crashPoint(${JSON.stringify(name)}); console.log('survived');`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, AENV_CRASH_POINT: armed },
    encoding: 'utf8',
  });
}

describe('crash points', () => {
  it('accepts only the listed names', () => {
    assert.equal(parseCrashPoint(undefined), undefined);
    assert.equal(parseCrashPoint(''), undefined);
    for (const name of CRASH_POINTS) assert.equal(parseCrashPoint(name), name);
    assert.throws(
      () => parseCrashPoint('pause.typo'),
      (err: unknown) => err instanceof AenvError && err.code === 'CONFIG_INVALID_VALUE',
    );
    assert.equal(new Set(CRASH_POINTS).size, CRASH_POINTS.length, 'names are unique');
  });

  it('names the point after a started machine is recorded', () => {
    assert.equal(recordedPoint('create', false), 'create.recorded');
    assert.equal(recordedPoint('create', true), 'fork.child-recorded');
    assert.equal(recordedPoint('resume', true), 'resume.recorded');
  });

  it('kills the process with SIGKILL at the armed point only', () => {
    const hit = runWith('pause.recorded', 'pause.recorded');
    assert.equal(hit.signal, 'SIGKILL');
    assert.doesNotMatch(String(hit.stdout), /survived/);
    const other = runWith('pause.recorded', 'kill.vm-stopped');
    assert.equal(other.status, 0);
    assert.match(String(other.stdout), /survived/);
    const unknown = runWith('no.such-point', 'kill.vm-stopped');
    assert.notEqual(unknown.status, 0, 'an unknown name is refused at load');
  });
});
