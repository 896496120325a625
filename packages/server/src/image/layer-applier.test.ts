// Layers made by GNU tar (a real, independent writer) are read by our tar
// reader and applied onto a temporary root: whiteouts, opaque directories,
// owners, modes, links, long names, xattrs and symlink escapes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { applyLayer, escapeDumpPath } from './layer-applier.js';
import { openLayerStream } from './layer-stream.js';
import { readTar } from './tar-reader.js';

const isRoot = process.getuid?.() === 0;
const hasSetfattr = (() => {
  try {
    execFileSync('setfattr', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function tar(dir: string, out: string, extra: string[] = []): void {
  execFileSync('tar', [
    '--format=pax',
    '--xattrs',
    '--xattrs-include=*',
    '--numeric-owner',
    '--sort=name',
    ...extra,
    '-C',
    dir,
    '-cf',
    out,
    '.',
  ]);
}

async function apply(root: string, file: string, scratch: string) {
  const stream = await openLayerStream(file);
  const stats = await applyLayer(root, readTar(stream.chunks), scratch);
  await stream.drain();
  return { stats, digest: stream.digest() };
}

describe('applying OCI layers', { skip: isRoot ? false : 'needs root (ownership)' }, () => {
  const work = mkdtempSync(join(tmpdir(), 'aenv-apply-'));
  const root = join(work, 'root');
  const scratch = join(work, 'scratch');
  const long = `deep/${'d'.repeat(90)}/${'f'.repeat(80)}.txt`;
  after(() => rmSync(work, { recursive: true, force: true }));

  before(() => {
    mkdirSync(root);
    mkdirSync(scratch);
    // Layer 1: a small tree with owners, modes, links and a long name.
    const l1 = join(work, 'l1');
    for (const d of ['etc', 'bin', 'home/user', 'dir', 'opq', 'deep', 'tmp']) {
      mkdirSync(join(l1, d), { recursive: true });
    }
    writeFileSync(join(l1, 'etc/passwd'), 'root:x:0:0::/root:/bin/sh\n', { mode: 0o644 });
    writeFileSync(join(l1, 'bin/tool'), '#!/bin/sh\necho tool\n');
    execFileSync('chmod', ['4755', join(l1, 'bin/tool')]);
    execFileSync('ln', [join(l1, 'bin/tool'), join(l1, 'bin/tool2')]);
    writeFileSync(join(l1, 'home/user/file'), 'mine');
    execFileSync('chown', ['-R', '1000:1000', join(l1, 'home/user')]);
    execFileSync('chmod', ['0640', join(l1, 'home/user/file')]);
    for (const f of ['dir/keep', 'dir/remove', 'opq/a', 'opq/b']) writeFileSync(join(l1, f), f);
    mkdirSync(join(l1, 'dir/subdir'));
    writeFileSync(join(l1, 'dir/subdir/x'), 'x');
    symlinkSync('bin/tool', join(l1, 'link'));
    execFileSync('mkfifo', [join(l1, 'fifo')]);
    mkdirSync(join(l1, long, '..'), { recursive: true });
    writeFileSync(join(l1, long), 'long');
    if (hasSetfattr)
      execFileSync('setfattr', ['-n', 'user.aenv', '-v', 'yes', join(l1, 'etc/passwd')]);
    execFileSync('chmod', ['1777', join(l1, 'tmp')]);
    tar(l1, join(work, 'l1.tar'));
    execFileSync('gzip', ['-k', join(work, 'l1.tar')]);
    // Layer 2: whiteouts, an opaque directory with a new entry, a planted escape symlink.
    const l2 = join(work, 'l2');
    mkdirSync(join(l2, 'dir'), { recursive: true });
    mkdirSync(join(l2, 'opq'));
    writeFileSync(join(l2, 'dir/.wh.remove'), '');
    writeFileSync(join(l2, 'dir/.wh.subdir'), '');
    writeFileSync(join(l2, 'opq/.wh..wh..opq'), '');
    writeFileSync(join(l2, 'opq/c'), 'c');
    writeFileSync(join(l2, 'new.txt'), 'new');
    symlinkSync('/', join(l2, 'escape'));
    tar(l2, join(work, 'l2.tar'));
    execFileSync('zstd', ['-q', join(work, 'l2.tar'), '-o', join(work, 'l2.tar.zst')]);
    // Layer 3: writes through the planted symlink, replaces a file by a directory.
    const l3 = join(work, 'l3');
    mkdirSync(join(l3, 'escape/tmp'), { recursive: true });
    writeFileSync(join(l3, 'escape/tmp/pwned'), 'inside');
    mkdirSync(join(l3, 'new.txt'));
    // Only the file, no entry for its directories: the path must resolve through the symlink.
    execFileSync('tar', ['-C', l3, '-cf', join(work, 'l3.tar'), 'escape/tmp/pwned', 'new.txt']);
  });

  it('reads gzip layers and computes the uncompressed digest (the diff_id)', async () => {
    const { stats, digest } = await apply(root, join(work, 'l1.tar.gz'), scratch);
    const want = createHash('sha256')
      .update(readFileSync(join(work, 'l1.tar')))
      .digest('hex');
    assert.equal(digest, `sha256:${want}`);
    assert.ok(stats.entries > 10);
  });

  it('keeps owners, modes, links, fifos and long names', () => {
    const tool = statSync(join(root, 'bin/tool'));
    assert.equal(tool.mode & 0o7777, 0o4755);
    assert.equal(tool.nlink, 2, 'hard link kept');
    assert.equal(statSync(join(root, 'bin/tool2')).ino, tool.ino);
    const file = statSync(join(root, 'home/user/file'));
    assert.deepEqual([file.uid, file.gid, file.mode & 0o777], [1000, 1000, 0o640]);
    assert.equal(readlinkSync(join(root, 'link')), 'bin/tool');
    assert.ok(lstatSync(join(root, 'fifo')).isFIFO());
    assert.equal(readFileSync(join(root, long), 'utf8'), 'long');
    assert.equal(statSync(join(root, 'tmp')).mode & 0o7777, 0o1777);
    if (hasSetfattr) {
      const out = execFileSync('getfattr', [
        '-n',
        'user.aenv',
        '--only-values',
        join(root, 'etc/passwd'),
      ]);
      assert.equal(out.toString(), 'yes');
    }
  });

  it('applies whiteouts and opaque directories (zstd layer)', async () => {
    const { stats } = await apply(root, join(work, 'l2.tar.zst'), scratch);
    assert.equal(stats.whiteouts, 3);
    assert.equal(existsSync(join(root, 'dir/remove')), false);
    assert.equal(existsSync(join(root, 'dir/subdir')), false);
    assert.equal(readFileSync(join(root, 'dir/keep'), 'utf8'), 'dir/keep');
    assert.equal(existsSync(join(root, 'opq/a')), false);
    assert.equal(existsSync(join(root, 'opq/b')), false);
    assert.equal(readFileSync(join(root, 'opq/c'), 'utf8'), 'c', 'same-layer entry survives');
    assert.equal(existsSync(join(root, 'dir/.wh.remove')), false, 'whiteout files are not created');
  });

  it('keeps writes through symlinks inside the root', async () => {
    await apply(root, join(work, 'l3.tar'), scratch);
    assert.equal(readFileSync(join(root, 'tmp/pwned'), 'utf8'), 'inside');
    assert.equal(existsSync('/tmp/pwned'), false);
    assert.ok(statSync(join(root, 'new.txt')).isDirectory(), 'a directory replaced the file');
  });

  it('refuses archives that climb out with ..', async () => {
    const evil = join(work, 'evil');
    mkdirSync(join(evil, 'a'), { recursive: true });
    writeFileSync(join(evil, 'a/x'), 'x');
    execFileSync('tar', [
      '-C',
      evil,
      '-cf',
      join(work, 'evil.tar'),
      '--transform=s,^a/x,../x,',
      'a/x',
    ]);
    const stream = await openLayerStream(join(work, 'evil.tar'));
    await assert.rejects(
      applyLayer(join(work, 'root'), readTar(stream.chunks), scratch),
      (e: unknown) => e instanceof AenvError && e.code === 'IMAGE_INVALID',
    );
    stream.close();
  });

  it('rejects data that is not a tar', async () => {
    writeFileSync(join(work, 'junk'), Buffer.alloc(1024, 7));
    const stream = await openLayerStream(join(work, 'junk'));
    await assert.rejects(
      applyLayer(root, readTar(stream.chunks), scratch),
      (e: unknown) => e instanceof AenvError && e.code === 'IMAGE_INVALID',
    );
    stream.close();
  });

  it('escapes paths for setfattr dumps', () => {
    assert.equal(escapeDumpPath('/a b\\c\n'), '/a\\040b\\134c\\012');
  });
});
