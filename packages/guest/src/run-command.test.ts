import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCommand } from './run-command.js';

describe('runCommand', () => {
  it('returns stdout and streams lines', async () => {
    const lines: string[] = [];
    const out = await runCommand('sh', ['-c', 'echo one; echo two >&2; printf three'], {
      step: 't',
      onLine: (l) => lines.push(l),
    });
    assert.equal(out, 'one\nthree');
    assert.deepEqual(lines.sort(), ['one', 'three', 'two']);
  });

  it('names a missing tool and its Debian package', async () => {
    await assert.rejects(
      runCommand('mkfs.erofs-does-not-exist', [], { step: 'x' }),
      (e: Error & { code?: string }) =>
        e.code === 'GUEST_TOOL_MISSING' &&
        /mkfs\.erofs-does-not-exist is not installed/.test(e.message),
    );
  });

  it('reports a failure with the step, the command and the output tail', async () => {
    await assert.rejects(
      runCommand('sh', ['-c', 'echo detail >&2; exit 3'], { step: 'kernel: unpack' }),
      (e: Error & { code?: string }) =>
        e.code === 'GUEST_BUILD_FAILED' &&
        /^kernel: unpack: `sh -c/.test(e.message) &&
        /exit status 3\ndetail/.test(e.message),
    );
  });
});
