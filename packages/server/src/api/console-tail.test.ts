import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MAX_TAIL_BYTES, tailConsoleLog } from './console-tail.js';

const dir = mkdtempSync(join(tmpdir(), 'aenv-console-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('console log tail', () => {
  it('takes the last lines, continuing into the rotated file', async () => {
    const log = join(dir, 'a.log');
    writeFileSync(`${log}.1`, 'one\ntwo\nthree\n');
    writeFileSync(log, 'four\nfive\n');
    assert.equal(await tailConsoleLog(log, 2), 'four\nfive\n');
    assert.equal(await tailConsoleLog(log, 4), 'two\nthree\nfour\nfive\n');
    assert.equal(await tailConsoleLog(log, 100), 'one\ntwo\nthree\nfour\nfive\n');
  });

  it('counts an unterminated last line and treats missing files as empty', async () => {
    const log = join(dir, 'b.log');
    writeFileSync(log, 'x\ny\npartial');
    assert.equal(await tailConsoleLog(log, 2), 'y\npartial');
    assert.equal(await tailConsoleLog(join(dir, 'none.log'), 10), '');
  });

  it('reads at most the last MiB of a file', async () => {
    const log = join(dir, 'c.log');
    writeFileSync(log, `${'old\n'.repeat(MAX_TAIL_BYTES / 4)}new\n`);
    const text = await tailConsoleLog(log, 1_000_000);
    assert.ok(text.endsWith('old\nnew\n'));
    assert.ok(Buffer.byteLength(text) <= MAX_TAIL_BYTES);
  });
});
