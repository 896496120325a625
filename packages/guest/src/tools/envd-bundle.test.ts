import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestEnvdBundle } from './envd-bundle.js';

describe('digestEnvdBundle', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-envd-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('digests names and contents of every file, so any change gives a new tools image', async () => {
    await writeFile(join(dir, 'envd.mjs'), 'a');
    await mkdir(join(dir, 'native'));
    await writeFile(join(dir, 'native/pty.node'), 'b');
    const first = await digestEnvdBundle({ dir, version: '1' });
    assert.deepEqual(first.files, ['envd.mjs', 'native/pty.node']);
    await writeFile(join(dir, 'native/pty.node'), 'c');
    assert.notEqual((await digestEnvdBundle({ dir, version: '1' })).digest, first.digest);
  });

  it('refuses a directory without envd.mjs', async () => {
    await assert.rejects(
      digestEnvdBundle({ dir: join(dir, 'native'), version: '1' }),
      (e: Error & { code?: string }) => e.code === 'GUEST_ENVD_BUNDLE_INVALID',
    );
  });
});
