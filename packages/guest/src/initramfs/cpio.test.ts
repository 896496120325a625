import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeCpio } from './cpio.js';

describe('writeCpio', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-cpio-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  const archive = writeCpio([
    { type: 'dir', path: 'bin', mode: 0o755 },
    { type: 'file', path: 'bin/hello', mode: 0o755, data: Buffer.from('#!/bin/sh\necho hi\n') },
    { type: 'symlink', path: 'bin/hi', target: 'hello' },
    { type: 'file', path: 'odd', mode: 0o600, data: Buffer.from('12345') },
    { type: 'chardev', path: 'console', mode: 0o600, major: 5, minor: 1 },
  ]);

  it('is read back by GNU cpio with names, modes, links and device numbers intact', async () => {
    const listing = execFileSync('cpio', ['-itv', '--quiet'], { input: archive, encoding: 'utf8' });
    assert.match(listing, /^drwxr-xr-x .* bin$/m);
    assert.match(listing, /^-rwxr-xr-x .* bin\/hello$/m);
    assert.match(listing, /^lrwxrwxrwx .* bin\/hi -> hello$/m);
    assert.match(listing, /^crw------- .* 5,\s+1 .* console$/m);
    execFileSync(
      'cpio',
      ['-id', '--quiet', '--no-absolute-filenames', 'bin', 'bin/hello', 'bin/hi', 'odd'],
      { input: archive, cwd: dir },
    );
    assert.equal(await readFile(join(dir, 'bin/hello'), 'utf8'), '#!/bin/sh\necho hi\n');
    assert.equal(await readFile(join(dir, 'odd'), 'utf8'), '12345');
    assert.equal(await readlink(join(dir, 'bin/hi')), 'hello');
    assert.equal((await stat(join(dir, 'odd'))).mode & 0o777, 0o600);
  });

  it('is deterministic and 4-byte aligned', () => {
    assert.deepEqual(
      writeCpio([{ type: 'dir', path: 'a', mode: 0o755 }]),
      writeCpio([{ type: 'dir', path: 'a', mode: 0o755 }]),
    );
    assert.equal(archive.length % 4, 0);
    assert.equal(archive.subarray(0, 6).toString(), '070701');
  });

  it('refuses absolute paths', () => {
    assert.throws(() => writeCpio([{ type: 'dir', path: '/etc', mode: 0o755 }]), /relative/);
  });
});
