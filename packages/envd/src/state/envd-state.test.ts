/**
 * Unit tests for user selection and the access token check.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { UserDb } from '../users/user-db.js';
import { basicAuthUser, EnvdState } from './envd-state.js';

describe('EnvdState', () => {
  const dir = mkdtempSync(join(tmpdir(), 'envd-state-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const passwd = join(dir, 'passwd');
  const group = join(dir, 'group');
  writeFileSync(group, '');

  it('defaults to `user` when it exists, else root; honours defaultUser and the request', () => {
    writeFileSync(passwd, 'root:x:0:0::/root:/bin/sh\n');
    const state = new EnvdState(new UserDb(passwd, group));
    assert.equal(state.resolveUser(undefined).name, 'root');
    writeFileSync(
      passwd,
      'root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\n',
    );
    assert.equal(state.resolveUser(undefined).name, 'user');
    assert.equal(state.resolveUser('').name, 'user');
    assert.equal(state.resolveUser('root').uid, 0);
    state.defaultUser = 'bob';
    assert.equal(state.resolveUser(undefined).name, 'bob');
    assert.throws(
      () => state.resolveUser('ghost'),
      (e: unknown) => e instanceof AenvError && e.code === 'ENVD_USER_UNKNOWN',
    );
  });

  it('matches the token only when one is set', () => {
    const state = new EnvdState(new UserDb(passwd, group));
    assert.equal(state.tokenMatches(undefined), true);
    state.accessToken = 'secret';
    assert.equal(state.tokenMatches(undefined), false);
    assert.equal(state.tokenMatches('secreT'), false);
    assert.equal(state.tokenMatches('secret'), true);
  });
});

describe('basicAuthUser', () => {
  it('reads the user of Basic base64("user:")', () => {
    assert.equal(basicAuthUser(`Basic ${Buffer.from('user:').toString('base64')}`), 'user');
    assert.equal(basicAuthUser(`basic ${Buffer.from('root:ignored').toString('base64')}`), 'root');
    assert.equal(basicAuthUser('Bearer x'), undefined);
    assert.equal(basicAuthUser(undefined), undefined);
  });
});
