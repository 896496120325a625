// Snapshots, fork, batch create and Idempotency-Key over the API, with a
// STAND-IN launcher (see standin-launcher.ts): state carried by snapshots
// and forks, fresh identities, lineage, E2B shapes, reference-counted
// snapshot files.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningNode } from '../src/index.js';
import { StandInLauncher, startStandInNode } from './standin-launcher.js';

const home = mkdtempSync(join(tmpdir(), 'aenv-fork-'));
const launcher = new StandInLauncher();
let node: RunningNode;

before(async () => {
  node = await startStandInNode(home, launcher, { AENV_MAX_FORK_COUNT: '16' });
});
after(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'x-api-key': node.apiKey, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    json: text === '' ? undefined : JSON.parse(text),
  };
}

async function kv(id: string, key: string, value?: string): Promise<string | number> {
  const res = await fetch(`${node.url}/kv/${key}`, {
    method: value === undefined ? 'GET' : 'PUT',
    headers: { 'e2b-sandbox-id': id },
    body: value,
  });
  return value === undefined ? (res.status === 200 ? await res.text() : res.status) : res.status;
}

async function create(body: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/v2/sandboxes', { templateID: 'base', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  return res.json.sandboxID as string;
}

const userSnapshots = () => node.state.snapshots.list().filter((s) => s.kind === 'user');

describe('snapshots (stand-in launcher)', () => {
  it('captures a running sandbox; the snapshot outlives it and seeds new sandboxes', async () => {
    const id = await create({ metadata: { run: 'a' } });
    await kv(id, 'answer', '42');
    const snap = await call('POST', `/sandboxes/${id}/snapshots`, { name: 'step-7' });
    assert.equal(snap.status, 201);
    assert.deepEqual(snap.json.names, ['step-7']);
    assert.equal(
      (await call('GET', `/sandboxes/${id}`)).json.state,
      'running',
      'the source runs on',
    );
    const taken = await call('POST', `/sandboxes/${id}/snapshots`, { name: 'step-7' });
    assert.equal(taken.status, 409);
    assert.equal(taken.json.error_code, 'SNAPSHOT_NAME_TAKEN');
    assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);

    const listed = await call('GET', `/snapshots?sandboxID=${id}`);
    assert.deepEqual(
      listed.json.map((s: { snapshotID: string }) => s.snapshotID),
      [snap.json.snapshotID],
    );
    const fromId = await Promise.all(
      [1, 2, 3].map(() => create({ templateID: snap.json.snapshotID })),
    );
    const fromName = await create({ templateID: 'step-7' });
    for (const child of [...fromId, fromName]) assert.equal(await kv(child, 'answer'), '42');
    const detail = (await call('GET', `/sandboxes/${fromName}`)).json;
    assert.equal(detail.templateID, snap.json.snapshotID);
    assert.ok(detail.lineage.includes(snap.json.snapshotID));

    const dir = userSnapshots().find((s) => s.id === snap.json.snapshotID)?.dir as string;
    assert.equal((await call('DELETE', `/templates/${snap.json.snapshotID}`)).status, 204);
    assert.equal((await call('GET', `/snapshots/${snap.json.snapshotID}`)).status, 404);
    assert.equal((await call('POST', '/v2/sandboxes', { templateID: 'step-7' })).status, 404);
    assert.ok(existsSync(dir), 'files stay while sandboxes run from the snapshot');
    for (const child of [...fromId, fromName]) await call('DELETE', `/sandboxes/${child}`);
    assert.equal(existsSync(dir), false, 'files go with the last sandbox');
    assert.equal((await call('DELETE', `/snapshots/${snap.json.snapshotID}`)).status, 404);
    assert.equal((await call('DELETE', '/templates/base')).status, 409);
  });
});

describe('fork (stand-in launcher)', () => {
  it('forks into children that inherit state and get fresh identities, to any depth', async () => {
    const id = await create({ secure: true, metadata: { group: 'g1' }, envVars: { X: '1' } });
    await kv(id, 'state', 'before-fork');
    const parentEnd = (await call('GET', `/sandboxes/${id}`)).json.endAt;
    const fork = await call('POST', `/sandboxes/${id}/fork`, {
      count: 4,
      metadata: { branch: 'b' },
    });
    assert.equal(fork.status, 201);
    assert.equal(fork.json.length, 4);
    const children = fork.json.map((r: { sandbox: { sandboxID: string } }) => r.sandbox.sandboxID);
    const tokens = new Set(
      fork.json.map((r: { sandbox: { envdAccessToken: string } }) => r.sandbox.envdAccessToken),
    );
    assert.equal(tokens.size, 4, 'every child has its own token');
    const parent = await call('GET', `/sandboxes/${id}`);
    assert.equal(parent.json.state, 'running');
    assert.equal(parent.json.endAt, parentEnd, 'the source keeps its TTL');
    assert.ok(!tokens.has(parent.json.envdAccessToken));
    for (const [i, child] of children.entries()) {
      assert.equal(await kv(child, 'state'), 'before-fork');
      await kv(child, 'state', `child-${i}`);
      const d = (await call('GET', `/sandboxes/${child}`)).json;
      assert.equal(d.parentSandboxID, id);
      assert.deepEqual(d.metadata, { group: 'g1', branch: 'b' });
      const guest = launcher.guests.find((g) => g.spec.sandboxId === child);
      assert.equal(
        guest?.inits[0]?.token,
        parent.json.envdAccessToken,
        'init presents the captured token',
      );
      assert.equal(typeof guest?.inits[0]?.body.entropy, 'string');
    }
    assert.equal(await kv(id, 'state'), 'before-fork', 'children do not touch the parent');
    const grand = await call('POST', `/sandboxes/${children[0]}/fork`, { count: 2 });
    const grandId = grand.json[0].sandbox.sandboxID as string;
    assert.equal(await kv(grandId, 'state'), 'child-0');
    const lineage = (await call('GET', `/sandboxes/${grandId}`)).json.lineage as string[];
    assert.equal(lineage.length, 3, 'template, fork, fork');
    for (const s of [
      id,
      ...children,
      ...grand.json.map((r: { sandbox: { sandboxID: string } }) => r.sandbox.sandboxID),
    ]) {
      assert.equal((await call('DELETE', `/sandboxes/${s}`)).status, 204);
    }
    assert.equal(
      node.state.snapshots.list().filter((s) => s.kind === 'fork').length,
      0,
      'fork checkpoints released',
    );
  });

  it('refuses counts above the node limit and forks of paused sandboxes', async () => {
    const id = await create();
    const tooMany = await call('POST', `/sandboxes/${id}/fork`, { count: 17 });
    assert.equal(tooMany.status, 400);
    await call('POST', `/sandboxes/${id}/pause`);
    assert.equal((await call('POST', `/sandboxes/${id}/fork`, { count: 1 })).status, 409);
    assert.equal((await call('POST', '/sandboxes/nope/fork', { count: 1 })).status, 404);
    await call('DELETE', `/sandboxes/${id}`);
  });

  it('creates batches and honours Idempotency-Key', async () => {
    const batch = await call('POST', '/v2/sandboxes', { templateID: 'base', count: 3 });
    assert.equal(batch.status, 201);
    assert.equal(batch.json.length, 3);
    const headers = { 'idempotency-key': 'req-123' };
    const [first, second] = await Promise.all([
      call('POST', '/v2/sandboxes', { templateID: 'base' }, headers),
      call('POST', '/v2/sandboxes', { templateID: 'base' }, headers),
    ]);
    const third = await call('POST', '/v2/sandboxes', { templateID: 'base' }, headers);
    assert.equal(first.json.sandboxID, second.json.sandboxID);
    assert.equal(first.json.sandboxID, third.json.sandboxID);
    assert.equal(third.headers.get('idempotent-replayed'), 'true');
    const other = await call('POST', '/sandboxes', { templateID: 'base' }, headers);
    assert.equal(other.status, 400, 'a key reused for another route');
    const ids = [
      first.json.sandboxID,
      ...batch.json.map((r: { sandbox: { sandboxID: string } }) => r.sandbox.sandboxID),
    ];
    assert.equal((await call('GET', '/v2/sandboxes')).json.length, ids.length);
    for (const s of ids) await call('DELETE', `/sandboxes/${s}`);
  });
});
