import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  READ_FINGERPRINT,
  parseCounterReading,
  parseFingerprint,
  parseMemoryHolder,
  writeState,
} from './guest-programs.js';

const DIGEST = 'a'.repeat(64);

describe('guest programs', () => {
  it('parses counter readings with the uptime in ms', () => {
    assert.deepEqual(parseCounterReading('42\n1234.56 99.00\n'), { count: 42, uptimeMs: 1234560 });
    assert.throws(() => parseCounterReading('42\n'), /expected 2 lines/);
    assert.throws(() => parseCounterReading('x\n1.0 1.0\n'), /not an integer/);
  });

  it('parses the memory holder, ok or corrupt, and its absence', () => {
    assert.deepEqual(parseMemoryHolder(`17 3 ${DIGEST} ok\n`), {
      pid: 17,
      round: 3,
      digest: DIGEST,
      ok: true,
    });
    assert.equal(parseMemoryHolder(`17 3 ${DIGEST} CORRUPT`)?.ok, false);
    assert.equal(parseMemoryHolder('none'), undefined);
    assert.throws(() => parseMemoryHolder('17 3 nodigest ok'), /memory holder/);
  });

  it('parses a fingerprint in the order the script prints it', () => {
    assert.equal(READ_FINGERPRINT.split('; ').length, 5);
    const f = parseFingerprint(`src\ntoken-1\n${DIGEST}\n9 1 ${DIGEST} ok\n12\n`);
    assert.deepEqual(f, {
      hostname: 'src',
      diskToken: 'token-1',
      tmpfsDigest: DIGEST,
      memory: { pid: 9, round: 1, digest: DIGEST, ok: true },
      counterPid: 12,
    });
    assert.equal(parseFingerprint(`h\nt\n${DIGEST}\nnone\nnone\n`).counterPid, undefined);
  });

  it('writes state as one command chain that fails as a whole', () => {
    assert.match(writeState('tok', 8), /^mkdir .* && echo tok > .* && head -c 8M .* && sync$/);
  });
});
