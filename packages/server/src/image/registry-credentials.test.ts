import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { dockerConfigCredentials, registryOfConfigKey } from './registry-credentials.js';

describe('registry credentials from a Docker config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aenv-dockercfg-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      auths: {
        'https://index.docker.io/v1/': { auth: Buffer.from('hub:s3cret:x').toString('base64') },
        '127.0.0.1:5000': { username: 'alice', password: 'pw' },
        'http://10.0.0.1:5001/v2/': { auth: Buffer.from('bob:pw2').toString('base64') },
        'ghcr.io': { identitytoken: 'refresh' },
      },
    }),
  );
  const lookup = dockerConfigCredentials(file);

  it('normalises config keys to registries', () => {
    assert.equal(registryOfConfigKey('https://index.docker.io/v1/'), 'docker.io');
    assert.equal(registryOfConfigKey('http://10.0.0.1:5001/v2/'), '10.0.0.1:5001');
    assert.equal(registryOfConfigKey('ghcr.io'), 'ghcr.io');
  });

  it('reads auth and username/password entries', async () => {
    assert.deepEqual(await lookup('docker.io'), { username: 'hub', password: 's3cret:x' });
    assert.deepEqual(await lookup('127.0.0.1:5000'), { username: 'alice', password: 'pw' });
    assert.deepEqual(await lookup('10.0.0.1:5001'), { username: 'bob', password: 'pw2' });
  });

  it('has nothing for unknown registries, identity tokens or a missing file', async () => {
    assert.equal(await lookup('quay.io'), undefined);
    assert.equal(await lookup('ghcr.io'), undefined);
    assert.equal(await dockerConfigCredentials(join(dir, 'none.json'))('docker.io'), undefined);
  });
});
