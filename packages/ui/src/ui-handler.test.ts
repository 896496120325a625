import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUiHandler, type UiHandler } from './ui-handler.js';

const KEY = 'e2b_good';

/** A STAND-IN for the node API (the real one is exercised by the browser suites in packages/cli). */
function standInApi(): Server {
  return createServer((req, res) => {
    if (req.headers['x-api-key'] !== KEY) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 401, message: 'invalid API key' }));
      return;
    }
    const body = JSON.stringify([
      { sandboxID: 's1', state: 'running', envdAccessToken: 'secret', seen: req.url },
    ]);
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
}

async function listen(s: Server): Promise<string> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('createUiHandler', () => {
  let api: Server;
  let host: Server;
  let ui: UiHandler;
  let url = '';
  let assets = '';

  before(async () => {
    assets = mkdtempSync(join(tmpdir(), 'aenv-ui-assets-'));
    writeFileSync(join(assets, 'index.html'), '<!doctype html><div id="root"></div>');
    api = standInApi();
    const apiUrl = await listen(api);
    ui = createUiHandler({
      kind: 'node',
      checkKey: (k) => k === KEY,
      apiUrl: () => apiUrl,
      assetsDir: assets,
    });
    host = createServer((req, res) => {
      if (!ui.handle(req, res)) res.writeHead(404).end();
    });
    url = await listen(host);
  });

  after(async () => {
    ui.close();
    host.closeAllConnections();
    api.closeAllConnections();
    await new Promise((r) => host.close(r));
    await new Promise((r) => api.close(r));
    rmSync(assets, { recursive: true, force: true });
  });

  const login = (key: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ key }),
    });

  it('serves the shell without a session but no data', async () => {
    const shell = await fetch(`${url}/ui/`);
    assert.equal(shell.status, 200);
    assert.match(shell.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.match(await shell.text(), /id="root"/);
    for (const p of ['/ui/session', '/ui/api/v2/sandboxes', '/ui/events']) {
      const res = await fetch(`${url}${p}`, { headers: { 'x-api-key': KEY } });
      assert.equal(res.status, 401, p);
      assert.doesNotMatch(await res.text(), /s1/);
    }
    assert.equal((await fetch(`${url}/ui/assets/nope.js`)).status, 404);
  });

  it('refuses a wrong or missing key without a cookie', async () => {
    for (const key of ['e2b_bad', '']) {
      const res = await login(key);
      assert.equal(res.status, 401);
      assert.match(res.headers.get('set-cookie') ?? '', /^aenv_session=; .*Max-Age=0/);
    }
  });

  it('logs in, forwards API calls with the key and strips envd tokens', async () => {
    const res = await login(KEY);
    assert.equal(res.status, 200);
    const cookie = res.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly; SameSite=Strict/);
    assert.ok(!cookie.includes(KEY));
    const session = cookie.split(';')[0] ?? '';
    const list = await fetch(`${url}/ui/api/v2/sandboxes?state=running`, {
      headers: { cookie: session },
    });
    assert.equal(list.status, 200);
    const body = (await list.json()) as Record<string, unknown>[];
    assert.equal(body[0]?.sandboxID, 's1');
    assert.equal(body[0]?.seen, '/v2/sandboxes?state=running');
    assert.equal('envdAccessToken' in (body[0] ?? {}), false);
    const out = await fetch(`${url}/ui/logout`, { method: 'POST', headers: { cookie: session } });
    assert.equal(out.status, 204);
    const after = await fetch(`${url}/ui/session`, { headers: { cookie: session } });
    assert.equal(after.status, 401);
  });

  it('refuses state-changing requests from another origin', async () => {
    const res = await login(KEY, { origin: 'https://evil.example' });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('set-cookie'), null);
  });
});

describe('createUiHandler without built assets', () => {
  it('answers 503 UI_NOT_BUILT for the shell', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aenv-ui-empty-'));
    const ui = createUiHandler({
      kind: 'gateway',
      checkKey: () => false,
      apiUrl: () => 'http://127.0.0.1:1',
      assetsDir: dir,
    });
    const host = createServer((req, res) => void ui.handle(req, res));
    try {
      const url = await listen(host);
      const res = await fetch(`${url}/ui/`);
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { error_code?: string }).error_code, 'UI_NOT_BUILT');
    } finally {
      ui.close();
      host.closeAllConnections();
      await new Promise((r) => host.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
