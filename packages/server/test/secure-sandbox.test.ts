/**
 * Secure sandboxes through the real node (API, proxy, orchestrator) with
 * the STAND-IN launcher's loopback guests: private ingress
 * (`network.allowPublicTraffic: false` demands `e2b-traffic-access-token`
 * on proxied requests, envd's port exempt) and envd access-token rotation
 * on fork and on `POST /sandboxes/{id}/resume` (the guest's `/init` is presented the old
 * token and given the new one). That envd then refuses the old token is
 * envd's own rule, tested in packages/envd/test/http-api.test.ts and, with
 * the real envd behind this node, in packages/cli/test/secure-standin.test.ts.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningNode } from '../src/index.js';
import { StandInLauncher, startStandInNode } from './standin-launcher.js';

const home = mkdtempSync(join(tmpdir(), 'aenv-secure-'));
const launcher = new StandInLauncher();
let node: RunningNode;

interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown> & { error_code?: string };
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'x-api-key': node.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Answer['json']) };
}

async function proxied(id: string, port: number, headers: Record<string, string> = {}) {
  const res = await fetch(`${node.url}/echo`, {
    headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': String(port), ...headers },
  });
  const text = await res.text();
  return { status: res.status, body: text };
}

/** Sends an upgrade request to port 3000 of `id`; resolves with the first bytes answered. */
function rawUpgrade(id: string, headers: Record<string, string>): Promise<string> {
  const { hostname, port } = new URL(node.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.on('connect', () =>
      socket.write(
        `GET /ws HTTP/1.1\r\nhost: x\r\ne2b-sandbox-id: ${id}\r\ne2b-sandbox-port: 3000\r\n${extra.join('')}connection: upgrade\r\nupgrade: echo\r\n\r\n`,
      ),
    );
    socket.once('data', (d: Buffer) => {
      socket.destroy();
      resolve(d.toString('latin1'));
    });
    socket.on('error', reject);
  });
}

before(async () => {
  node = await startStandInNode(home, launcher);
});

after(async () => {
  await node.close();
  await launcher.close();
  rmSync(home, { recursive: true, force: true });
});

describe('private ingress (allowPublicTraffic: false)', () => {
  it('demands the traffic token on user ports, not on envd, and not for public sandboxes', async () => {
    const created = await call('POST', '/sandboxes', {
      templateID: 'base',
      network: { allowPublicTraffic: false },
    });
    assert.equal(created.status, 201);
    const id = created.json.sandboxID as string;
    const token = created.json.trafficAccessToken as string;
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.equal((await call('GET', `/sandboxes/${id}`)).status, 200);

    const bare = await proxied(id, 3000);
    assert.equal(bare.status, 401);
    assert.equal(JSON.parse(bare.body).error_code, 'PROXY_TRAFFIC_TOKEN_INVALID');
    const wrong = await proxied(id, 3000, { 'e2b-traffic-access-token': `${token.slice(1)}0` });
    assert.equal(wrong.status, 401);
    const right = await proxied(id, 3000, { 'e2b-traffic-access-token': token });
    assert.equal(right.status, 200, right.body);
    assert.equal(JSON.parse(right.body).url, '/echo');
    assert.equal((await proxied(id, 49983)).status, 200, "envd's port is envd's to guard");

    const refused = await rawUpgrade(id, {});
    assert.match(refused, /^HTTP\/1\.1 401 /, 'an upgrade without the token is refused');
    const allowed = await rawUpgrade(id, { 'e2b-traffic-access-token': token });
    assert.match(allowed, /^HTTP\/1\.1 101 /, 'and passes with it');

    const open = await call('POST', '/sandboxes', { templateID: 'base' });
    assert.equal(open.json.trafficAccessToken, null);
    assert.equal((await proxied(open.json.sandboxID as string, 3000)).status, 200);
    for (const s of [id, open.json.sandboxID as string])
      assert.equal((await call('DELETE', `/sandboxes/${s}`)).status, 204);
  });

  it('gives every fork child its own traffic token; a sibling token does not open it', async () => {
    const parent = await call('POST', '/sandboxes', {
      templateID: 'base',
      network: { allowPublicTraffic: false },
    });
    const pid = parent.json.sandboxID as string;
    const fork = await call('POST', `/sandboxes/${pid}/fork`, { count: 2 });
    assert.equal(fork.status, 201);
    const children = (fork.json as unknown as { sandbox: Record<string, string> }[]).map(
      (r) => r.sandbox,
    );
    const tokens = new Set([
      parent.json.trafficAccessToken,
      ...children.map((c) => c.trafficAccessToken),
    ]);
    assert.equal(tokens.size, 3);
    const [a, b] = children as [Record<string, string>, Record<string, string>];
    const header = (t: unknown) => ({ 'e2b-traffic-access-token': String(t) });
    assert.equal(
      (await proxied(a.sandboxID as string, 8080, header(b.trafficAccessToken))).status,
      401,
    );
    assert.equal(
      (await proxied(a.sandboxID as string, 8080, header(parent.json.trafficAccessToken))).status,
      401,
    );
    assert.equal(
      (await proxied(a.sandboxID as string, 8080, header(a.trafficAccessToken))).status,
      200,
    );
    for (const s of [pid, a.sandboxID, b.sandboxID])
      assert.equal((await call('DELETE', `/sandboxes/${s}`)).status, 204);
  });
});

describe('envd access token rotation', () => {
  it('gives a secure sandbox a new token on POST /resume, presenting the old one to envd', async () => {
    const created = await call('POST', '/sandboxes', { templateID: 'base', secure: true });
    const id = created.json.sandboxID as string;
    const first = created.json.envdAccessToken as string;
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal((await call('POST', `/sandboxes/${id}/pause`)).status, 204);
    const resumed = await call('POST', `/sandboxes/${id}/resume`, {});
    assert.equal(resumed.status, 201);
    const second = resumed.json.envdAccessToken as string;
    assert.match(second, /^[0-9a-f]{64}$/);
    assert.notEqual(second, first, 'the token rotates on resume');
    const guest = launcher.guests.filter((g) => g.spec.sandboxId === id).at(-1);
    assert.equal(guest?.inits[0]?.token, first, 'init is authorized with the token envd holds');
    assert.equal(guest?.inits[0]?.body.accessToken, second, 'and sets the new one');
    assert.equal((await call('GET', `/sandboxes/${id}`)).json.envdAccessToken, second);

    assert.equal((await call('POST', `/sandboxes/${id}/pause`)).status, 204);
    const connected = await call('POST', `/sandboxes/${id}/connect`, { timeout: 60 });
    assert.equal(connected.status, 201);
    // The e2b SDK's `sandbox.connect()` keeps the token it holds: a connect must not rotate it.
    assert.equal(connected.json.envdAccessToken, second, 'connect keeps the token');
    assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);
  });

  it('keeps the token when a resume fails, so the paused envd still opens with it', async () => {
    const created = await call('POST', '/sandboxes', { templateID: 'base', secure: true });
    const id = created.json.sandboxID as string;
    assert.equal((await call('POST', `/sandboxes/${id}/pause`)).status, 204);
    launcher.bootDelayMs = 0;
    const original = launcher.launch.bind(launcher);
    launcher.launch = () => Promise.reject(new Error('stand-in: launch failed'));
    try {
      assert.notEqual((await call('POST', `/sandboxes/${id}/resume`, {})).status, 201);
    } finally {
      launcher.launch = original;
    }
    const after = await call('GET', `/sandboxes/${id}`);
    assert.equal(after.json.state, 'paused');
    assert.equal(after.json.envdAccessToken, created.json.envdAccessToken);
    assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);
  });
});
