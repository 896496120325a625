// `aenv debug layer inspect` as a user runs it: the built `aenv` entry point
// in a child process, reading the blob store of a node home (the default
// directory store under $AENV_HOME/blobs) that holds an imported layer.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { FsBlobStore, importRawImage } from '@aenv/storage';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const MiB = 1 << 20;

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function aenv(args: string[], env: Record<string, string>): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('aenv debug layer inspect', () => {
  let home: string;
  let digest: string;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'aenv-cli-'));
    const raw = Buffer.alloc(8 * MiB);
    raw.fill(0x5a, 0, MiB);
    raw.fill(0x33, 4 * MiB, 5 * MiB);
    await writeFile(join(home, 'disk.raw'), raw);
    ({ digest } = await importRawImage(join(home, 'disk.raw'), {
      store: new FsBlobStore(join(home, 'blobs')),
      workDir: home,
    }));
  });

  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('prints a layer of the node blob store as text', async () => {
    const r = await aenv(['debug', 'layer', 'inspect', digest], { AENV_HOME: home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^layer +${digest}$`, 'm'));
    assert.match(r.stdout, /^virtual size 8\.00 MiB \(8388608\)$/m);
    assert.match(r.stdout, /^data +2\.00 MiB \(2097152\) in 2 extents/m);
    assert.match(r.stdout, /^ {2}data 0x0000400000 \+1\.00 MiB/m);
  });

  it('prints JSON with --json, the home given by --home', async () => {
    const r = await aenv(['debug', 'layer', 'inspect', '--json', '--home', home, digest], {});
    assert.equal(r.code, 0, r.stderr);
    const i = JSON.parse(r.stdout) as { digest: string; dataBytes: number; extents: unknown[] };
    assert.equal(i.digest, digest);
    assert.equal(i.dataBytes, 2 * MiB);
    assert.deepEqual(i.extents, [
      { offset: 0, length: MiB, kind: 'data' },
      { offset: 4 * MiB, length: MiB, kind: 'data' },
    ]);
  });

  it('reports a missing layer with its code, and a bad digest as a usage error', async () => {
    const missing = `sha256:${'e'.repeat(64)}`;
    const r = await aenv(['debug', 'layer', 'inspect', missing], { AENV_HOME: home });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /\(LAYER_NOT_FOUND\)/);
    const bad = await aenv(['debug', 'layer', 'inspect', 'sha256:xyz'], { AENV_HOME: home });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /is not a digest/);
    const unknown = await aenv(['debug', 'layer', 'frobnicate'], { AENV_HOME: home });
    assert.equal(unknown.code, 2);
  });
});
