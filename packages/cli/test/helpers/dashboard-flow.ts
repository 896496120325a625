/**
 * The dashboard's acceptance flow in a real browser, shared by the
 * stand-in suite (`dashboard-standin.test.ts`) and the microVM suite
 * (`dashboard.vm.test.ts`): no data without a session, wrong key refused,
 * login, a sandbox created through the API appearing live, its terminal
 * (`echo hi` → `hi`), a fork from the page showing in the lineage tree,
 * kill, logout. Each step saves a screenshot.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { Page } from 'playwright-core';
import type { TestBrowser } from './browser.js';

/** The node the flow runs against. */
export interface FlowNode {
  readonly url: string;
  readonly apiKey: string;
}

/** Calls the node API directly (what a client outside the browser does). */
export async function nodeApi<T>(
  n: FlowNode,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(new URL(path, n.url), {
    method,
    headers: {
      'x-api-key': n.apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** The page's document, as far as the checks read it (the tests compile without DOM types). */
interface Doc {
  readonly document: { readonly cookie: string };
}

/** The status a WebSocket upgrade is answered with (101 when it is accepted). */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Without a session: the login page, and every data route 401 without data. */
export async function checkNoDataWithoutSession(b: TestBrowser, n: FlowNode): Promise<void> {
  const { page } = b;
  await page.goto(`${n.url}/ui/`);
  await page.getByTestId('login-form').waitFor();
  for (const path of ['/ui/session', '/ui/api/v2/sandboxes', '/ui/api/nodes', '/ui/events']) {
    const res = await page.request.get(`${n.url}${path}`);
    assert.equal(res.status(), 401, `${path} without a session`);
    const text = await res.text();
    assert.doesNotMatch(text, /sandboxID|nodeID/, `${path} leaks data`);
  }
  // A key in X-API-Key does not open the dashboard's API: only the session does.
  const withHeader = await page.request.get(`${n.url}/ui/api/v2/sandboxes`, {
    headers: { 'x-api-key': n.apiKey },
  });
  assert.equal(withHeader.status(), 401);
  assert.equal(await upgradeStatus(`${n.url}/ui/terminal/anything`), 401, 'a terminal');
  await b.shot('login');
}

/** A wrong key: an error on the login page, no cookie, no data. */
export async function checkWrongKey(b: TestBrowser, n: FlowNode): Promise<void> {
  const { page } = b;
  await page.getByTestId('login-key').fill('e2b_0000000000000000000000000000000000000000');
  await page.getByTestId('login-submit').click();
  await page.getByTestId('login-error').waitFor();
  assert.match((await page.getByTestId('login-error').textContent()) ?? '', /invalid API key/);
  const cookies = await b.context.cookies(`${n.url}/ui/`);
  assert.equal(cookies.filter((c) => c.name === 'aenv_session' && c.value !== '').length, 0);
  assert.equal(await page.getByTestId('nav-sandboxes').count(), 0);
  await b.shot('wrong-key');
}

/** Logs in; checks the cookie is HttpOnly, SameSite=Strict, Path=/ui and hidden from scripts. */
export async function logIn(b: TestBrowser, n: FlowNode): Promise<void> {
  const { page } = b;
  await page.getByTestId('login-key').fill(n.apiKey);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('nav-sandboxes').waitFor();
  const [cookie] = (await b.context.cookies(`${n.url}/ui/`)).filter(
    (c) => c.name === 'aenv_session',
  );
  assert.ok(cookie !== undefined, 'no session cookie');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.path, '/ui');
  assert.notEqual(cookie.value, n.apiKey);
  const scriptCookies = await page.evaluate(() => (globalThis as unknown as Doc).document.cookie);
  assert.doesNotMatch(scriptCookies, /aenv_session/);
  assert.equal((await page.content()).includes(n.apiKey), false, 'the key is in the page');
  await page.getByTestId('live-status').filter({ hasText: 'live' }).waitFor();
  await page.getByTestId('node-card').first().waitFor();
  await b.shot('overview');
}

/** Creates a sandbox through the API while the list is open; returns its id once it shows. */
export async function seeSandboxAppear(b: TestBrowser, n: FlowNode, template: string) {
  const { page } = b;
  await page.getByTestId('nav-sandboxes').click();
  await page.getByTestId('sandbox-table').waitFor();
  const before = await page.getByTestId('sandbox-row').count();
  const created = await nodeApi<{ sandboxID: string }>(n, 'POST', '/sandboxes', {
    templateID: template,
    timeout: 600,
    metadata: { suite: 'dashboard' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.sandboxID;
  const row = page.locator(`[data-testid="sandbox-row"][data-sandbox-id="${id}"]`);
  await row.waitFor();
  assert.equal(await page.getByTestId('sandbox-row').count(), before + 1);
  assert.match((await row.textContent()) ?? '', /running/);
  await b.shot('sandboxes');
  return id;
}

/** The text of the terminal's rows. */
async function terminalLines(page: Page): Promise<string[]> {
  const text = await page.locator('[data-testid="terminal"] .xterm-rows').innerText();
  return text.split('\n').map((l) => l.trim());
}

/** Opens the sandbox's page and its terminal; types `echo hi`, reads `hi`. */
export async function terminalEchoHi(b: TestBrowser, id: string): Promise<void> {
  const { page } = b;
  await page.locator(`[data-testid="sandbox-row"][data-sandbox-id="${id}"] a`).first().click();
  await page.getByTestId('sandbox-page').waitFor();
  await page.getByTestId('open-terminal').click();
  await page.getByTestId('terminal-status').filter({ hasText: 'connected' }).waitFor();
  await page.locator('[data-testid="terminal"] .xterm-screen').click();
  await page.keyboard.type('echo hi\n');
  for (let i = 0; i < 150; i++) {
    if ((await terminalLines(page)).includes('hi')) break;
    await page.waitForTimeout(200);
  }
  assert.ok((await terminalLines(page)).includes('hi'), (await terminalLines(page)).join('\n'));
  await b.shot('terminal');
}

/** Forks from the page; the child's page shows it under its parent in the lineage tree. */
export async function forkFromUi(b: TestBrowser, parent: string): Promise<string> {
  const { page } = b;
  await page.getByTestId('action-fork').click();
  await page.getByTestId('confirm').click();
  const onChild = (): boolean => {
    const hash = new URL(page.url()).hash;
    return /^#\/sandboxes\/[^/]+$/.test(hash) && !hash.endsWith(encodeURIComponent(parent));
  };
  for (let i = 0; i < 600 && !onChild(); i++) await page.waitForTimeout(200);
  const dialog = page.getByTestId('confirm-dialog');
  const failed = (await dialog.count()) > 0 ? await dialog.innerText() : '';
  assert.ok(onChild(), `no child page after the fork: ${failed}`);
  const child = decodeURIComponent(page.url().split('/').pop() ?? '');
  const tree = page.getByTestId('lineage-tree');
  await tree.locator(`[data-key="sandbox:${child}"]`).waitFor({ timeout: 60_000 });
  // The child hangs below its parent.
  const nested = tree.locator(
    `li:has(> [data-key="sandbox:${parent}"]) [data-key="sandbox:${child}"]`,
  );
  await nested.waitFor();
  await b.shot('fork-lineage');
  return child;
}

/** Kills a sandbox from its page; it leaves the list, and the API no longer knows it. */
export async function killFromUi(b: TestBrowser, n: FlowNode, id: string): Promise<void> {
  const { page } = b;
  await page.goto(`${n.url}/ui/#/sandboxes/${encodeURIComponent(id)}`);
  await page.getByTestId('sandbox-page').waitFor();
  await page.getByTestId('action-kill').click();
  await b.shot('kill-confirm');
  await page.getByTestId('confirm').click();
  await page.getByTestId('sandbox-table').waitFor();
  await page
    .locator(`[data-testid="sandbox-row"][data-sandbox-id="${id}"]`)
    .waitFor({ state: 'detached' });
  const gone = await nodeApi(n, 'GET', `/sandboxes/${id}`);
  assert.equal(gone.status, 404);
}

/** The remaining pages, then logout: back to the login page, and no data. */
export async function otherPagesAndLogout(b: TestBrowser, n: FlowNode): Promise<void> {
  const { page } = b;
  await page.getByTestId('nav-templates').click();
  await page.getByTestId('template-row').first().waitFor();
  await b.shot('templates');
  await page.getByTestId('nav-nodes').click();
  await page.getByTestId('node-card').first().waitFor();
  await b.shot('nodes');
  await page.getByTestId('nav-overview').click();
  await page.getByTestId('chart-creates').waitFor();
  await b.shot('overview-after');
  await page.getByTestId('logout').click();
  await page.getByTestId('login-form').waitFor();
  assert.equal((await page.request.get(`${n.url}/ui/api/v2/sandboxes`)).status(), 401);
  await page.reload();
  await page.getByTestId('login-form').waitFor();
}
