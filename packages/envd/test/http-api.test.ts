/**
 * envd's plain HTTP surface: /health, /envs, /init, /metrics, the access
 * token, signed file URLs (through the SDK's uploadUrl/downloadUrl and by
 * hand), gzip both ways, multipart and octet-stream uploads, 406 and 507.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { get, type IncomingHttpHeaders } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { AuthenticationError } from 'e2b';
import { ENVD_VERSION, fileSignature } from '../src/index.js';
import { IS_ROOT, startFixture, type EnvdFixture } from './helpers/envd-fixture.js';

const TOKEN = 'test-token-123';

/** A GET that leaves the body as sent (fetch would decompress it). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('plain HTTP routes without a token', () => {
  let fx: EnvdFixture;
  before(async () => (fx = await startFixture()));
  after(() => fx.close());

  it('answers /health with 204 and unknown routes with 404 JSON', async () => {
    assert.equal((await fetch(`${fx.url}/health`)).status, 204);
    const res = await fetch(`${fx.url}/nope`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: number }).code, 404);
  });

  it('serves /metrics with E2B field names', async () => {
    const m = (await (await fetch(`${fx.url}/metrics`)).json()) as Record<string, number>;
    for (const key of [
      'ts',
      'cpu_count',
      'cpu_used_pct',
      'mem_total',
      'mem_used',
      'mem_cache',
      'disk_used',
      'disk_total',
    ]) {
      assert.equal(typeof m[key], 'number', key);
    }
    assert.ok((m.mem_total ?? 0) > 0 && (m.disk_total ?? 0) > 0 && (m.cpu_count ?? 0) > 0);
  });

  it('gives unsigned upload/download URLs that work', async () => {
    const sbx = fx.sandboxWith({ envdVersion: ENVD_VERSION });
    const form = new FormData();
    form.append('file', new Blob(['via url']), 'ignored-name');
    const up = await fetch(await sbx.uploadUrl('url/plain.txt'), { method: 'POST', body: form });
    assert.equal(up.status, 200);
    assert.equal(await (await fetch(await sbx.downloadUrl('url/plain.txt'))).text(), 'via url');
  });

  it('takes gzip uploads (octet-stream) and gives gzip downloads', async () => {
    const data = Buffer.from('zipped '.repeat(1000));
    const up = await fetch(`${fx.url}/files?path=gz/a.txt`, {
      method: 'POST',
      body: gzipSync(data),
      headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
    });
    assert.equal(up.status, 200);
    assert.deepEqual(await up.json(), [
      { path: join(fx.home, 'gz/a.txt'), name: 'a.txt', type: 'file' },
    ]);
    assert.deepEqual(readFileSync(join(fx.home, 'gz/a.txt')), data);
    const { headers, body } = await rawGet(`${fx.url}/files?path=gz/a.txt`, {
      'accept-encoding': 'gzip',
    });
    assert.equal(headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(body), data);
    const refused = await fetch(`${fx.url}/files?path=gz/a.txt`, {
      headers: { 'accept-encoding': 'br, identity;q=0' },
    });
    assert.equal(refused.status, 406);
  });

  it('takes multipart uploads with the filename as the path', async () => {
    const form = new FormData();
    form.append('file', new Blob(['1']), 'mp/one.txt');
    form.append('file', new Blob(['2']), `${fx.home}/mp/two.txt`);
    form.append('other', 'ignored field');
    const res = await fetch(`${fx.url}/files`, { method: 'POST', body: form });
    assert.equal(res.status, 200);
    const files = (await res.json()) as Array<{ path: string }>;
    assert.deepEqual(
      files.map((f) => f.path),
      [join(fx.home, 'mp/one.txt'), join(fx.home, 'mp/two.txt')],
    );
    const dup = new FormData();
    dup.append('file', new Blob(['a']), 'mp/same.txt');
    dup.append('file', new Blob(['b']), 'mp/same.txt');
    assert.equal((await fetch(`${fx.url}/files`, { method: 'POST', body: dup })).status, 400);
    const wrongType = await fetch(`${fx.url}/files?path=x`, {
      method: 'POST',
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(wrongType.status, 400);
    const noPath = await fetch(`${fx.url}/files`, {
      method: 'POST',
      body: 'x',
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(noPath.status, 400);
  });

  it(
    'answers 507 when the disk is full',
    { skip: !IS_ROOT && 'mounting a small tmpfs needs root' },
    async (t) => {
      const small = join(fx.home, 'small');
      mkdirSync(small);
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', small], {
          stdio: 'ignore',
        });
      } catch {
        t.skip('cannot mount tmpfs here');
        return;
      }
      try {
        const res = await fetch(`${fx.url}/files?path=small/big.bin`, {
          method: 'POST',
          body: Buffer.alloc(2 << 20, 1),
          headers: { 'content-type': 'application/octet-stream' },
        });
        assert.equal(res.status, 507);
        assert.match(((await res.json()) as { message: string }).message, /not enough disk space/);
        assert.equal((await fetch(`${fx.url}/health`)).status, 204);
      } finally {
        execFileSync('umount', [small]);
      }
    },
  );
});

describe('/init', () => {
  let fx: EnvdFixture;
  before(async () => (fx = await startFixture()));
  after(() => fx.close());

  it('applies /init: env vars, default user and workdir; idempotent; /envs reflects it', async () => {
    mkdirSync(join(fx.dir, 'work'));
    const body = JSON.stringify({
      envVars: { FROM_INIT: 'yes' },
      defaultUser: 'root',
      defaultWorkdir: join(fx.dir, 'work'),
      timestamp: new Date().toISOString(),
      volumeMounts: [],
    });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${fx.url}/init`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 204);
    }
    assert.deepEqual(await (await fetch(`${fx.url}/envs`)).json(), { FROM_INIT: 'yes' });
    const sbx = await fx.sandbox();
    const r = await sbx.commands.run('echo "$FROM_INIT $(pwd) $(id -u)"');
    assert.equal(r.stdout, `yes ${join(fx.dir, 'work')} ${IS_ROOT ? 0 : process.getuid?.()}\n`);
    const bad = await fetch(`${fx.url}/init`, { method: 'POST', body: '{"envVars": 3}' });
    assert.equal(bad.status, 400);
  });
});

describe('/init with entropy', () => {
  // a STAND-IN for envd-entropy (which reseeds the kernel RNG and so only
  // runs inside a sandbox, see the vmm VM tests): records what it is fed
  let fx: EnvdFixture;
  let work = '';
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'envd-entropy-'));
    writeFileSync(join(work, 'helper'), `#!/bin/sh\ncat > ${work}/fed\n`, { mode: 0o755 });
    writeFileSync(join(work, 'failing'), '#!/bin/sh\necho no ioctl >&2\nexit 1\n', { mode: 0o755 });
    fx = await startFixture({ entropyHelper: join(work, 'helper') });
  });
  after(async () => {
    await fx.close();
    rmSync(work, { recursive: true, force: true });
  });

  const init = (url: string, body: unknown): Promise<Response> =>
    fetch(`${url}/init`, { method: 'POST', body: JSON.stringify(body) });

  it('feeds the decoded bytes to the helper before answering', async () => {
    const bytes = randomBytes(64);
    assert.equal((await init(fx.url, { entropy: bytes.toString('base64') })).status, 204);
    assert.deepEqual(readFileSync(join(work, 'fed')), bytes);
  });

  it('refuses entropy that is empty, too long or not base64', async () => {
    for (const entropy of ['', randomBytes(513).toString('base64'), 'not base64!', 42]) {
      assert.equal((await init(fx.url, { entropy })).status, 400, String(entropy));
    }
  });

  it('fails /init, applying nothing, when the helper fails', async () => {
    const failing = await startFixture({ entropyHelper: join(work, 'failing') });
    try {
      const res = await init(failing.url, { entropy: 'AAAA', envVars: { A: '1' } });
      assert.equal(res.status, 500);
      assert.match(
        ((await res.json()) as { message: string }).message,
        /cannot reseed the RNG: no ioctl/,
      );
      assert.deepEqual(await (await fetch(`${failing.url}/envs`)).json(), {});
    } finally {
      await failing.close();
    }
  });
});

describe('with an access token', () => {
  let fx: EnvdFixture;
  before(async () => {
    fx = await startFixture();
    const res = await fetch(`${fx.url}/init`, {
      method: 'POST',
      body: JSON.stringify({ accessToken: TOKEN }),
    });
    assert.equal(res.status, 204);
  });
  after(() => fx.close());

  it('demands X-Access-Token on RPCs and routes, except /health and signed /files', async () => {
    assert.equal((await fetch(`${fx.url}/health`)).status, 204);
    assert.equal((await fetch(`${fx.url}/envs`)).status, 401);
    assert.equal(
      (await fetch(`${fx.url}/envs`, { headers: { 'x-access-token': TOKEN } })).status,
      200,
    );
    const anonymous = await fx.sandbox();
    await assert.rejects(
      anonymous.commands.run('true'),
      (e: unknown) => e instanceof AuthenticationError,
    );
    const wrong = fx.sandboxWith({ envdVersion: ENVD_VERSION, envdAccessToken: 'wrong' });
    await assert.rejects(wrong.files.list('.'), (e: unknown) => e instanceof AuthenticationError);
    const right = fx.sandboxWith({ envdVersion: ENVD_VERSION, envdAccessToken: TOKEN });
    assert.equal((await right.commands.run('echo ok')).stdout, 'ok\n');
    await right.files.write('t.txt', 'token');
    assert.equal(await right.files.read('t.txt'), 'token');
  });

  it('signs upload and download URLs that work without the token, also with expiry and user', async () => {
    const sbx = fx.sandboxWith({ envdVersion: ENVD_VERSION, envdAccessToken: TOKEN });
    for (const opts of [
      {},
      { useSignatureExpiration: 60 },
      { user: 'root', useSignatureExpiration: 60 },
    ]) {
      const form = new FormData();
      form.append('file', new Blob([JSON.stringify(opts)]), 'x');
      const up = await fetch(await sbx.uploadUrl('signed/file.txt', opts), {
        method: 'POST',
        body: form,
      });
      assert.equal(up.status, 200, JSON.stringify(opts));
      const down = await fetch(await sbx.downloadUrl('signed/file.txt', opts));
      assert.equal(down.status, 200);
      assert.equal(await down.text(), JSON.stringify(opts));
    }
  });

  it('refuses bad, missing and expired signatures, and a wrong token header, with 401', async () => {
    writeFileSync(join(fx.home, 'sig.txt'), 'secret');
    const path = 'sig.txt';
    const good = fileSignature(path, 'read', '', TOKEN);
    const url = (q: Record<string, string> = {}): string =>
      `${fx.url}/files?${new URLSearchParams({ path, ...q }).toString()}`;
    assert.equal((await fetch(url({ signature: good }))).status, 200);
    assert.equal((await fetch(url({ signature: `${good}x` }))).status, 401);
    assert.equal((await fetch(url())).status, 401);
    const writeSig = fileSignature(path, 'write', '', TOKEN);
    assert.equal(
      (await fetch(url({ signature: writeSig }))).status,
      401,
      'a write signature cannot read',
    );
    const past = Math.floor(Date.now() / 1000) - 10;
    const expired = await fetch(
      url({
        signature: fileSignature(path, 'read', '', TOKEN, past),
        signature_expiration: String(past),
      }),
    );
    assert.equal(expired.status, 401);
    assert.match(((await expired.json()) as { message: string }).message, /expired/);
    assert.equal((await fetch(url(), { headers: { 'x-access-token': 'nope' } })).status, 401);
    assert.equal((await fetch(url(), { headers: { 'x-access-token': TOKEN } })).status, 200);
  });

  it('lets /init change the token only with the current one', async () => {
    const denied = await fetch(`${fx.url}/init`, {
      method: 'POST',
      body: JSON.stringify({ accessToken: 'hijack' }),
    });
    assert.equal(denied.status, 401);
    const changed = await fetch(`${fx.url}/init`, {
      method: 'POST',
      body: JSON.stringify({ accessToken: 'rotated' }),
      headers: { 'x-access-token': TOKEN },
    });
    assert.equal(changed.status, 204);
    assert.equal(
      (await fetch(`${fx.url}/envs`, { headers: { 'x-access-token': 'rotated' } })).status,
      200,
    );
    assert.equal(
      (await fetch(`${fx.url}/envs`, { headers: { 'x-access-token': TOKEN } })).status,
      401,
    );
    const back = await fetch(`${fx.url}/init`, {
      method: 'POST',
      body: JSON.stringify({ accessToken: TOKEN }),
      headers: { 'x-access-token': 'rotated' },
    });
    assert.equal(back.status, 204);
  });
});
