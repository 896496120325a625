/**
 * Unit tests for path expansion and root confinement.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import type { UserInfo } from '../users/user-db.js';
import { expandPath, PathResolver } from './path-resolver.js';

const user: UserInfo = {
  name: 'user',
  uid: 1,
  gid: 1,
  home: '/home/user',
  shell: '/bin/sh',
  groups: [1],
};

describe('expandPath', () => {
  it('expands ~, resolves relative paths against home and normalizes', () => {
    assert.equal(expandPath('~', user), '/home/user');
    assert.equal(expandPath('~/a/../b', user), '/home/user/b');
    assert.equal(expandPath('rel/x', user), '/home/user/rel/x');
    assert.equal(expandPath('/abs//y/', user), '/abs/y');
    assert.equal(expandPath('../up', user), '/home/up');
  });

  it('uses the default workdir for an empty path, else home', () => {
    assert.equal(expandPath('', user, '/work'), '/work');
    assert.equal(expandPath('', user), '/home/user');
  });

  it('refuses ~other and NUL bytes', () => {
    assert.throws(
      () => expandPath('~root/x', user),
      (e: unknown) => e instanceof AenvError && e.code === 'ENVD_PATH_INVALID',
    );
    assert.throws(
      () => expandPath('a\0b', user),
      (e: unknown) => e instanceof AenvError && e.code === 'ENVD_PATH_INVALID',
    );
  });
});

describe('PathResolver', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'envd-paths-')));
  after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'inside'));
  symlinkSync('/', join(dir, 'to-root'));
  symlinkSync(join(dir, 'inside'), join(dir, 'to-inside'));
  const inDir: UserInfo = { ...user, home: dir };

  it('accepts paths under the root, existing or not', async () => {
    const paths = await PathResolver.create(dir);
    assert.equal(await paths.resolve('inside/new/file', inDir), join(dir, 'inside/new/file'));
    assert.equal(await paths.resolve('to-inside/x', inDir), join(dir, 'to-inside/x'));
    assert.equal(await paths.resolve(dir, inDir), dir);
  });

  it('refuses paths that leave the root lexically or through a symlink', async () => {
    const paths = await PathResolver.create(dir);
    for (const p of ['/etc', '..', 'to-root/etc', 'to-root']) {
      await assert.rejects(
        paths.resolve(p, inDir),
        (e: unknown) => e instanceof AenvError && e.code === 'ENVD_PATH_OUTSIDE_ROOT',
        p,
      );
    }
  });

  it('confines nothing when the root is /', async () => {
    const paths = await PathResolver.create('/');
    assert.equal(await paths.resolve('/etc/passwd', inDir), '/etc/passwd');
  });
});
