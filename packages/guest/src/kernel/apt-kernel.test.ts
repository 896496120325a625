import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAptShow, parseKernelDependency } from './apt-kernel.js';

describe('apt output parsing', () => {
  it('finds the versioned kernel a metapackage depends on', () => {
    const out =
      'linux-image-cloud-amd64\n  Depends: linux-image-6.1.0-57-cloud-amd64\n  Recommends: <foo>\n';
    assert.equal(parseKernelDependency(out), 'linux-image-6.1.0-57-cloud-amd64');
    assert.equal(
      parseKernelDependency(' |Depends: linux-image-6.1.0-9-cloud-amd64\n'),
      'linux-image-6.1.0-9-cloud-amd64',
    );
    assert.equal(parseKernelDependency('x\n  Depends: kmod\n'), undefined);
  });

  it('reads the first stanza of apt-cache show', () => {
    const out =
      'Package: linux-image-6.1.0-57-cloud-amd64\nVersion: 6.1.192-3\nSize: 26705532\nSHA256: 4fdd\n\nPackage: other\nVersion: 1\n';
    assert.deepEqual(parseAptShow(out), {
      Package: 'linux-image-6.1.0-57-cloud-amd64',
      Version: '6.1.192-3',
      Size: '26705532',
      SHA256: '4fdd',
    });
  });
});
