/**
 * Tests of the command runner, with real processes.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { run } from './command-runner.js';

async function failure(p: Promise<unknown>): Promise<AenvError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AenvError);
    assert.equal(err.code, 'NET_COMMAND_FAILED');
    return err;
  }
  assert.fail('expected a failure');
}

describe('run', () => {
  it('passes stdin and returns stdout', async () => {
    const { stdout } = await run(['cat'], { input: 'rules\n' });
    assert.equal(stdout, 'rules\n');
  });

  it('fails with the exit status and stderr', async () => {
    const err = await failure(run(['sh', '-c', 'echo boom >&2; exit 3']));
    assert.equal(err.fields['exitCode'], 3);
    assert.equal(err.fields['stderr'], 'boom');
    assert.match(err.message, /exit 3\): boom/);
  });

  it('fails when the command does not exist or outlives its timeout', async () => {
    assert.match((await failure(run(['/nonexistent/tool']))).message, /cannot start/);
    const t0 = Date.now();
    assert.match((await failure(run(['sleep', '5'], { timeoutMs: 100 }))).message, /timed out/);
    assert.ok(Date.now() - t0 < 3000);
  });

  it('survives a command that exits without reading its input', async () => {
    const big = 'x'.repeat(1 << 20);
    await run(['true'], { input: big });
  });
});
