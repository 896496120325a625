import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FALLBACK_MIRROR, hostMirror, pickMirror } from './apt-mirror.js';

const deb822 = `Types: deb
URIs: http://mirror.example/debian/
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
`;

describe('pickMirror', () => {
  it('reads deb822 stanzas, matching the suite exactly', () => {
    assert.equal(
      pickMirror([{ name: 'debian.sources', text: deb822 }], 'bookworm'),
      'http://mirror.example/debian',
    );
    assert.equal(
      pickMirror([{ name: 'debian.sources', text: deb822 }], 'bookworm-security'),
      'http://mirror.example/debian-security',
    );
  });

  it('reads one-line sources with options and comments; skips disabled and other suites', () => {
    const list =
      '# deb http://old bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.example/debian bookworm main contrib\n';
    assert.equal(
      pickMirror([{ name: 'x.list', text: list }], 'bookworm'),
      'http://one.example/debian',
    );
    const disabled =
      'Types: deb\nURIs: http://off.example\nSuites: bookworm\nComponents: main\nEnabled: no\n';
    assert.equal(pickMirror([{ name: 'a.sources', text: disabled }], 'bookworm'), undefined);
    assert.equal(pickMirror([{ name: 'x.list', text: list }], 'trixie'), undefined);
  });
});

describe('hostMirror', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-apt-'));
    await mkdir(join(dir, 'sources.list.d'));
    await writeFile(join(dir, 'sources.list.d/debian.sources'), deb822);
    await writeFile(
      join(dir, 'sources.list.d/other.list.disabled'),
      'deb http://no.example bookworm main\n',
    );
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('reads the apt configuration directory, falling back to deb.debian.org', async () => {
    assert.equal(await hostMirror('bookworm', dir), 'http://mirror.example/debian');
    assert.equal(await hostMirror('trixie', dir), FALLBACK_MIRROR);
  });
});
