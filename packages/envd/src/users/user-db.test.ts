/**
 * Unit tests for {@link UserDb}: parsing, supplementary groups, reloading.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UserDb } from './user-db.js';

describe('UserDb', () => {
  const dir = mkdtempSync(join(tmpdir(), 'envd-userdb-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const passwd = join(dir, 'passwd');
  const group = join(dir, 'group');
  writeFileSync(
    passwd,
    [
      'root:x:0:0:root:/root:/bin/bash',
      '# comment',
      'broken line',
      'user:x:1000:1000::/home/user:/bin/bash',
    ].join('\n'),
  );
  writeFileSync(
    group,
    ['root:x:0:', 'user:x:1000:', 'sudo:x:27:user,other', 'dev:x:50:user'].join('\n'),
  );
  const db = new UserDb(passwd, group);

  it('finds users with their primary group first, then supplementary groups', () => {
    assert.deepEqual(db.byName('user'), {
      name: 'user',
      uid: 1000,
      gid: 1000,
      home: '/home/user',
      shell: '/bin/bash',
      groups: [1000, 27, 50],
    });
    assert.equal(db.byName('nobody'), undefined);
  });

  it('maps ids back to names', () => {
    assert.equal(db.userName(0), 'root');
    assert.equal(db.groupName(27), 'sudo');
    assert.equal(db.userName(4242), undefined);
  });

  it('sees accounts added after the first lookup', () => {
    writeFileSync(
      passwd,
      'root:x:0:0:root:/root:/bin/bash\nnewbie:x:1001:1001::/home/newbie:/bin/sh\n',
    );
    assert.equal(db.byName('newbie')?.uid, 1001);
    assert.equal(db.byName('user'), undefined);
  });
});
