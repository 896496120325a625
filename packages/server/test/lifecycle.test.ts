// The sandbox lifecycle over the API with a STAND-IN launcher (see
// standin-launcher.ts): pause/resume/connect semantics, the state machine's
// 409s, serialized concurrent operations, TTL actions, auto-resume through
// the proxy, metrics, and the node's durable state across restarts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openNodeState, type RunningNode } from '../src/index.js';
import { StandInLauncher, startStandInNode } from './standin-launcher.js';

const homes: string[] = [];
after(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

function newHome(): string {
  const h = mkdtempSync(join(tmpdir(), 'aenv-life-'));
  homes.push(h);
  return h;
}

function client(node: RunningNode) {
  const call = async (method: string, path: string, body?: unknown, headers = {}) => {
    const res = await fetch(`${node.url}${path}`, {
      method,
      headers: { 'x-api-key': node.apiKey, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
  };
  const create = async (body: Record<string, unknown> = {}): Promise<string> => {
    const res = await call('POST', '/v2/sandboxes', { templateID: 'base', ...body });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    return res.json.sandboxID as string;
  };
  const guestCall = async (id: string, method: string, path: string, body?: string) => {
    const res = await fetch(`${node.url}${path}`, {
      method,
      headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '49983' },
      body,
    });
    return { status: res.status, text: await res.text() };
  };
  return { call, create, guestCall };
}

describe('lifecycle (stand-in launcher)', () => {
  it('pauses, refuses a second pause with 409, resumes on connect with its memory', async () => {
    const launcher = new StandInLauncher();
    const node = await startStandInNode(newHome(), launcher);
    const { call, create, guestCall } = client(node);
    try {
      const id = await create({ secure: true });
      const token = (await call('GET', `/sandboxes/${id}`)).json.envdAccessToken as string;
      assert.equal((await guestCall(id, 'PUT', '/kv/counter', '41')).status, 204);
      assert.equal((await call('POST', `/sandboxes/${id}/pause`, {})).status, 204);
      const paused = await call('GET', `/sandboxes/${id}`);
      assert.equal(paused.json.state, 'paused');
      const again = await call('POST', `/sandboxes/${id}/pause`, {});
      assert.equal(again.status, 409);
      assert.equal(again.json.error_code, 'SBX_INVALID_STATE');
      assert.match(again.json.message, /it is paused/);
      assert.equal(
        (await guestCall(id, 'GET', '/kv/counter')).status,
        502,
        'no machine while paused',
      );
      const listed = await call('GET', '/v2/sandboxes?state=paused');
      assert.deepEqual(
        listed.json.map((s: { sandboxID: string }) => s.sandboxID),
        [id],
      );
      const resumed = await call('POST', `/v2/sandboxes/${id}/connect`, { timeout: 60 });
      assert.equal(resumed.status, 201);
      assert.equal(resumed.json.envdAccessToken, token, 'the token survives a pause');
      assert.equal((await guestCall(id, 'GET', '/kv/counter')).text, '41');
      const init = launcher.guests.at(-1)?.inits.at(-1);
      assert.equal(init?.token, token, '/init after a restore carries the current token');
      assert.equal((await call('POST', `/v2/sandboxes/${id}/connect`, {})).status, 200);
      const legacy = await call('POST', `/sandboxes/${id}/resume`, { timeout: 10 });
      assert.equal(legacy.status, 409, 'resume needs a paused sandbox');
      assert.equal((await call('DELETE', `/sandboxes/${id}`)).status, 204);
      assert.equal(node.state.snapshots.list().filter((s) => s.kind === 'pause').length, 0);
    } finally {
      await node.close();
    }
  });

  it('survives 20 pause/resume cycles with its memory, keeping one pause snapshot', async () => {
    const node = await startStandInNode(newHome(), new StandInLauncher());
    const { call, create, guestCall } = client(node);
    try {
      const id = await create();
      for (let i = 0; i < 20; i++) {
        await guestCall(id, 'PUT', `/kv/step${i}`, String(i));
        assert.equal((await call('POST', `/sandboxes/${id}/pause`, {})).status, 204);
        assert.equal(node.state.snapshots.list().filter((s) => s.kind === 'pause').length, 1);
        assert.equal((await call('POST', `/sandboxes/${id}/connect`, { timeout: 60 })).status, 201);
        for (let j = 0; j <= i; j++) {
          assert.equal((await guestCall(id, 'GET', `/kv/step${j}`)).text, String(j));
        }
      }
    } finally {
      await node.close();
    }
  });

  it('serializes concurrent operations: a kill during a pause waits, then wins', async () => {
    const launcher = new StandInLauncher();
    const node = await startStandInNode(newHome(), launcher);
    const { call, create } = client(node);
    try {
      const id = await create();
      launcher.suspendDelayMs = 200;
      const pause1 = call('POST', `/sandboxes/${id}/pause`, {});
      while (node.orchestrator.get(id).state !== 'pausing') await sleep(5);
      const pause2 = call('POST', `/sandboxes/${id}/pause`, {});
      await sleep(20);
      const kill = call('DELETE', `/sandboxes/${id}`);
      assert.equal((await pause1).status, 204, 'the pause in progress completes');
      assert.equal((await kill).status, 204, 'then the kill wins');
      assert.equal((await pause2).status, 404, 'the queued pause finds the sandbox gone');
      assert.equal((await call('GET', `/sandboxes/${id}`)).status, 404);
      assert.equal(node.state.sandboxes.get(id), undefined, 'the record is gone from the store');
    } finally {
      await node.close();
    }
  });

  it('keeps running when a pause fails', async () => {
    const launcher = new StandInLauncher();
    const node = await startStandInNode(newHome(), launcher);
    const { call, create, guestCall } = client(node);
    try {
      const id = await create();
      launcher.failNextSuspend = true;
      const res = await call('POST', `/sandboxes/${id}/pause`, {});
      assert.equal(res.status, 500);
      assert.equal(res.json.error_code, 'SBX_PAUSE_FAILED');
      assert.equal((await call('GET', `/sandboxes/${id}`)).json.state, 'running');
      assert.equal((await guestCall(id, 'GET', '/health')).status, 204);
    } finally {
      await node.close();
    }
  });

  it('pauses at TTL expiry by default, and traffic wakes an auto-resume sandbox', async () => {
    const node = await startStandInNode(newHome(), new StandInLauncher());
    const { call, create, guestCall } = client(node);
    try {
      const plain = await create({ timeout: 1 });
      const waking = await create({ timeout: 1, autoPause: true, autoResume: { enabled: true } });
      await guestCall(waking, 'PUT', '/kv/x', 'kept');
      await sleep(1600);
      assert.equal((await call('GET', `/sandboxes/${plain}`)).json.state, 'paused');
      assert.equal((await call('GET', `/sandboxes/${waking}`)).json.state, 'paused');
      assert.equal((await guestCall(plain, 'GET', '/health')).status, 502, 'no auto-resume');
      const woke = await guestCall(waking, 'GET', '/kv/x');
      assert.equal(woke.status, 200);
      assert.equal(woke.text, 'kept');
      assert.equal((await call('GET', `/sandboxes/${waking}`)).json.state, 'running');
      const detail = (await call('GET', `/sandboxes/${waking}`)).json;
      assert.deepEqual(detail.lifecycle, { onTimeout: 'pause', autoResume: true });
    } finally {
      await node.close();
    }
  });

  it('refreshes extend a TTL and never shorten it', async () => {
    const node = await startStandInNode(newHome(), new StandInLauncher());
    const { call, create } = client(node);
    try {
      const id = await create({ timeout: 600 });
      const endAt = () => call('GET', `/sandboxes/${id}`).then((r) => Date.parse(r.json.endAt));
      const before = await endAt();
      assert.equal(
        (await call('POST', `/sandboxes/${id}/refreshes`, { duration: 10 })).status,
        204,
      );
      assert.equal(await endAt(), before);
      assert.equal(
        (await call('POST', `/sandboxes/${id}/refreshes`, { duration: 3600 })).status,
        204,
      );
      assert.ok((await endAt()) > before + 2_000_000);
      assert.equal((await call('POST', `/sandboxes/${id}/timeout`, { timeout: 5 })).status, 204);
      assert.ok((await endAt()) < before, 'timeout may shorten');
    } finally {
      await node.close();
    }
  });

  it('answers E2B sandbox metrics sampled from envd', async () => {
    const node = await startStandInNode(newHome(), new StandInLauncher());
    const { call, create } = client(node);
    try {
      const id = await create();
      const res = await call('GET', `/sandboxes/${id}/metrics`);
      assert.equal(res.status, 200);
      assert.equal(res.json.length, 1);
      const [m] = res.json;
      assert.equal(m.cpuCount, 2);
      assert.equal(m.cpuUsedPct, 12.5);
      assert.equal(m.memTotal, 512 << 20);
      assert.equal(m.diskTotal, 0);
      assert.equal(typeof m.timestamp, 'string');
      const none = await call('GET', `/sandboxes/${id}/metrics?start=${m.timestampUnix + 100}`);
      assert.deepEqual(none.json, []);
      assert.equal((await call('GET', '/sandboxes/nope/metrics')).status, 404);
    } finally {
      await node.close();
    }
  });

  it('exports per-stage latency histograms and sandbox counts on /metrics', async () => {
    const node = await startStandInNode(newHome(), new StandInLauncher());
    const { call, create } = client(node);
    try {
      const id = await create();
      await call('POST', `/sandboxes/${id}/pause`, {});
      const text = await (await fetch(`${node.url}/metrics`)).text();
      assert.match(text, /aenv_sandbox_operation_seconds_count\{op="create",stage="total"\} 1/);
      assert.match(text, /aenv_sandbox_operation_seconds_count\{op="pause",stage="total"\} 1/);
      assert.match(text, /aenv_sandbox_operations_total\{op="create",result="ok"\} 1/);
      assert.match(text, /aenv_sandboxes\{state="paused"\} 1/);
    } finally {
      await node.close();
    }
  });
});

describe('durable node state (stand-in launcher)', () => {
  it('pauses running sandboxes at shutdown and brings everything back at start', async () => {
    const home = newHome();
    const first = await startStandInNode(home, new StandInLauncher());
    const a = client(first);
    const running = await a.create({ metadata: { who: 'running' } });
    const paused = await a.create({ metadata: { who: 'paused' } });
    await a.guestCall(running, 'PUT', '/kv/v', 'r');
    await a.guestCall(paused, 'PUT', '/kv/v', 'p');
    await a.call('POST', `/sandboxes/${paused}/pause`, {});
    await first.close();

    const second = await startStandInNode(home, new StandInLauncher());
    const b = client(second);
    try {
      assert.equal((await b.call('GET', `/sandboxes/${paused}`)).json.state, 'paused');
      for (let i = 0; i < 100 && second.orchestrator.get(running).state !== 'running'; i++) {
        await sleep(20);
      }
      assert.equal((await b.call('GET', `/sandboxes/${running}`)).json.state, 'running');
      assert.equal((await b.guestCall(running, 'GET', '/kv/v')).text, 'r');
      assert.equal(
        (await b.call('POST', `/sandboxes/${paused}/connect`, { timeout: 9 })).status,
        201,
      );
      assert.equal((await b.guestCall(paused, 'GET', '/kv/v')).text, 'p');
      assert.deepEqual((await b.call('GET', `/sandboxes/${paused}`)).json.metadata, {
        who: 'paused',
      });
    } finally {
      await second.close();
    }
  });

  it('reports sandboxes whose machine died with a crashed node as failed, keeping paused ones', async () => {
    const home = newHome();
    const first = await startStandInNode(home, new StandInLauncher());
    const a = client(first);
    const paused = await a.create();
    await a.call('POST', `/sandboxes/${paused}/pause`, {});
    await first.close();
    // What a kill -9 leaves: a record that says running, and nothing behind it.
    const state = openNodeState(home);
    const doc = state.sandboxes.get(paused);
    assert.ok(doc);
    state.sandboxes.put({
      ...doc,
      id: 'crashedrunningsandbx',
      state: 'running',
      pausedSnapshotId: undefined,
    });
    state.close();
    const second = await startStandInNode(home, new StandInLauncher());
    const b = client(second);
    try {
      const lost = await b.call('GET', '/sandboxes/crashedrunningsandbx');
      assert.equal(lost.status, 200);
      assert.match(String(lost.json.failureReason), /lost with the previous node process/);
      assert.equal(second.state.sandboxes.get('crashedrunningsandbx')?.state, 'failed');
      assert.equal((await b.call('GET', `/sandboxes/${paused}`)).json.state, 'paused');
      assert.equal((await b.call('DELETE', '/sandboxes/crashedrunningsandbx')).status, 204);
      assert.equal(second.state.sandboxes.get('crashedrunningsandbx'), undefined);
    } finally {
      await second.close();
    }
  });
});
