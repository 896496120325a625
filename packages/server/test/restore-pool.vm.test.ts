// The pool of prepared restores on a real node (real microVMs, slots,
// storage engine), driven through the API and the real e2b SDK: creates
// from `base` take prepared machines (the vmm package's restore event says
// `prepared: true` for the sandbox), each gets its own egress policy on the
// pooled slot and its console log under its own id; a killed sandbox leaves
// only the pool's waiting machines; a rebuilt template's machines are
// drained and new ones prepared from the new snapshot (a RAM diff applied
// while preparing); close leaves nothing (the harness checks QEMU
// processes, namespaces, links, nft tables, sandbox dirs and NBD sockets).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Sandbox } from 'e2b';
import { startTestNode, type TestNode } from './node-harness.js';

let t: TestNode;
const restores: Record<string, unknown>[] = [];
const onRestore = (m: unknown): void => void restores.push(m as Record<string, unknown>);

before(async () => {
  subscribe('aenv:vmm:restore', onRestore);
  t = await startTestNode({ AENV_POOL_LOW: '1', AENV_POOL_HIGH: '2' });
});

after(async () => {
  unsubscribe('aenv:vmm:restore', onRestore);
  await t?.close();
});

async function poolReady(n: number, dir?: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const level = t.node.pool.levels()[0];
    if (level !== undefined && level.ready >= n && (dir === undefined || level.snapshotDir === dir))
      return;
    await sleep(100);
  }
  assert.fail(`the pool never had ${n} ready: ${JSON.stringify(t.node.pool.levels())}`);
}

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.node.url}${path}`, {
    method,
    headers: { 'x-api-key': t.node.apiKey, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

const prepared = (id: string): boolean =>
  restores.some(
    (e) => e['sandbox.id'] === id && e.prepared === true && e['error.code'] === undefined,
  );

describe('prepared restores on a node (real microVMs)', { timeout: 600_000 }, () => {
  it('creates take prepared machines with their own policy, logs and directory', async () => {
    await poolReady(2);
    const created = await api('POST', '/v2/sandboxes', {
      templateID: 'base',
      network: { denyOut: ['198.51.100.77/32'] },
    });
    const id = created.sandboxID as string;
    assert.ok(prepared(id), `sandbox ${id} did not start from a prepared restore`);
    const sbx = await Sandbox.connect(id, { ...t.sdk });
    assert.equal((await sbx.commands.run('echo pooled')).stdout, 'pooled\n');
    const rules = execFileSync('nft', ['list', 'table', 'inet', `${t.prefix}_slots`], {
      encoding: 'utf8',
    });
    assert.match(rules, /198\.51\.100\.77/, "the sandbox's egress policy is on its slot");
    const logs = await fetch(`${t.node.url}/sandboxes/${id}/logs`, {
      headers: { 'x-api-key': t.node.apiKey },
    });
    assert.equal(logs.status, 200, 'the console log is found under the sandbox id');
    const entries = readdirSync(join(t.home, 'sandboxes'));
    assert.ok(entries.includes(id), 'the sandbox directory (a link to the pooled one) exists');
    const other = await Sandbox.create('base', { ...t.sdk });
    assert.ok(prepared(other.sandboxId), 'the second create took the second machine');
    await Promise.all([sbx.kill(), other.kill()]);
    const left = readdirSync(join(t.home, 'sandboxes'));
    assert.deepEqual(
      left.filter((n) => !n.startsWith('pool-')),
      [],
      'killed sandboxes leave only the pool',
    );
    assert.doesNotMatch(
      execFileSync('nft', ['list', 'table', 'inet', `${t.prefix}_slots`], { encoding: 'utf8' }),
      /198\.51\.100\.77/,
      'the released slot dropped the policy',
    );
  });

  it('drains a rebuilt template and prepares its new snapshot', async () => {
    await poolReady(1);
    const sbx = await Sandbox.create('base', { ...t.sdk });
    await sbx.files.write('/home/user/rebuilt', 'v2');
    await sbx.commands.run('echo v2 > /dev/shm/in-memory');
    const snap = await api('POST', `/sandboxes/${sbx.sandboxId}/snapshots`, {});
    await sbx.kill();
    const { state } = t.node;
    const base = state.templates.find('base');
    assert.ok(base !== undefined);
    const oldDir = t.node.pool.levels()[0]?.snapshotDir;
    state.templates.put({ ...base, snapshotId: snap.snapshotID as string });
    t.node.pool.reconcile();
    const newDir = state.snapshots.find(snap.snapshotID as string)?.dir;
    assert.ok(newDir !== undefined && newDir !== oldDir);
    await poolReady(1, newDir);
    const next = await Sandbox.create('base', { ...t.sdk });
    assert.ok(prepared(next.sandboxId), 'created from a machine of the new snapshot');
    assert.equal(await next.files.read('/home/user/rebuilt'), 'v2');
    assert.equal((await next.commands.run('cat /dev/shm/in-memory')).stdout, 'v2\n');
    await next.kill();
    state.templates.put(base);
  });
});
