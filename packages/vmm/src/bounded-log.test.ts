import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BoundedLog } from './bounded-log.js';

describe('BoundedLog', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-log-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('keeps at most maxBytes on disk across the file and one rotation, newest output last', async () => {
    const path = join(dir, 'serial.log');
    const log = new BoundedLog(path, { maxBytes: 1000 });
    for (let i = 0; i < 100; i++) log.write(Buffer.from(`line ${String(i).padStart(3, '0')}\n`));
    log.close();
    const [cur, old] = await Promise.all([stat(path), stat(`${path}.1`)]);
    assert.ok(cur.size + old.size <= 1000, `${cur.size} + ${old.size}`);
    assert.match(await readFile(path, 'utf8'), /line 099\n$/);
    assert.match(await readFile(`${path}.1`, 'utf8'), /^line \d{3}\n/);
  });

  it('truncates a single oversized chunk to its newest half', async () => {
    const path = join(dir, 'big.log');
    const log = new BoundedLog(path, { maxBytes: 100 });
    log.write(Buffer.from(`${'a'.repeat(200)}END`));
    log.close();
    const text = await readFile(path, 'utf8');
    assert.equal(text.length, 50);
    assert.ok(text.endsWith('END'));
  });

  it('keeps a text tail that survives multi-byte characters split across chunks', () => {
    const log = new BoundedLog(join(dir, 'tail.log'), { tailChars: 8 });
    const euro = Buffer.from('€');
    log.write(Buffer.from('hello '));
    log.write(euro.subarray(0, 1));
    log.write(euro.subarray(1));
    assert.equal(log.tail(), 'hello €');
    log.write(Buffer.from(' and more'));
    assert.equal(log.tail(), 'and more');
    log.close();
    log.write(Buffer.from('!'));
    assert.equal(log.tail(), 'nd more!');
  });
});
