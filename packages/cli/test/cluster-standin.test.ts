// A cluster of three real nodes (stand-in machines: the real envd as a host
// process) behind the real gateway, with the real scheduler loop and a real
// redis-server: the unmodified e2b SDK creates sandboxes through the gateway,
// they spread, the data plane works through it, lists aggregate; a paused
// sandbox resumes on another node once its own is gone; a gateway and
// scheduler restart loses nothing; drain, templates and tenant limits; host
// and header routing, streaming and WebSocket upgrades to a sandbox port.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectRedis } from '@aenv/control-plane';
import { redisServerAvailable } from '@aenv/control-plane/testing';
import type { Redis } from 'ioredis';
import { clusterKeys } from '@aenv/shared';
import { Sandbox } from 'e2b';
import { standInUnavailable } from './helpers/envd-standin-launcher.js';
import { runAenv } from './helpers/run-aenv.js';
import { startStandInCluster, type StandInCluster } from './helpers/standin-cluster.js';
import { startWsEcho, streamThrough, wsEcho } from './helpers/ws-echo.js';

const skip =
  standInUnavailable() ??
  (redisServerAvailable() ? false : 'redis-server is not installed (apt install redis-server)');
const keys = clusterKeys();
let c: StandInCluster;

let client: Redis | undefined;
function clientOf(): Redis {
  if (client === undefined) throw new Error('no redis client');
  return client;
}

async function bindingNode(id: string): Promise<string | null> {
  return clientOf().hget(keys.sandbox(id), 'node');
}

/** A stand-in machine's root (envd runs on the host, confined to it). */
async function rootOf(s: Sandbox): Promise<string> {
  return (await s.commands.run('pwd')).stdout.trim();
}

async function gw(path: string, init: RequestInit = {}) {
  return fetch(`${c.gateway.url}${path}`, {
    ...init,
    headers: { 'x-api-key': c.key, 'content-type': 'application/json', ...init.headers },
  });
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(200);
  }
}

describe('a stand-in cluster behind the gateway', { skip, timeout: 300_000 }, () => {
  before(async () => {
    c = await startStandInCluster(3);
    client = await connectRedis(c.redis.url, 'test');
  });
  after(async () => {
    client?.disconnect();
    await c?.close();
  });

  it('registers every node and converges them on one base template', async () => {
    const nodes = (await (await gw('/nodes')).json()) as { nodeID: string; status: string }[];
    assert.deepEqual(
      nodes.map((n) => [n.nodeID, n.status]),
      [
        ['node-1', 'ready'],
        ['node-2', 'ready'],
        ['node-3', 'ready'],
      ],
    );
    for (const h of c.nodes) await h.member.syncTemplates();
    const bases = new Set(c.nodes.map((h) => h.state.templates.find('base')?.snapshotId));
    assert.equal(bases.size, 1, 'one base snapshot across the cluster');
  });

  it('creates through the gateway with the e2b SDK, spreads, proxies, lists', async () => {
    const sandboxes = await Promise.all(
      Array.from({ length: 6 }, () => Sandbox.create('base', { ...c.sdk(), timeoutMs: 120_000 })),
    );
    const homes = await Promise.all(sandboxes.map((s) => bindingNode(s.sandboxId)));
    const perNode = new Map<string, number>();
    for (const h of homes) perNode.set(String(h), (perNode.get(String(h)) ?? 0) + 1);
    assert.equal(perNode.size, 3, `spread over every node: ${JSON.stringify([...perNode])}`);
    for (const s of sandboxes.slice(0, 3)) {
      const out = await s.commands.run('echo hello && pwd');
      const [hello, root] = out.stdout.trim().split('\n');
      assert.equal(hello, 'hello');
      await s.files.write(`${root}/note.txt`, `note of ${s.sandboxId}`);
      assert.equal(await s.files.read(`${root}/note.txt`), `note of ${s.sandboxId}`);
    }
    const listed = await Sandbox.list({ ...c.sdk() }).nextItems();
    const ids = new Set(listed.map((s) => s.sandboxId));
    for (const s of sandboxes) assert.ok(ids.has(s.sandboxId), `${s.sandboxId} listed`);
    // v2 pagination across nodes: pages of 4 cover all 6 exactly once.
    const seen: string[] = [];
    let token: string | null = null;
    do {
      const res: Response = await gw(`/v2/sandboxes?limit=4${token ? `&nextToken=${token}` : ''}`);
      seen.push(...((await res.json()) as { sandboxID: string }[]).map((s) => s.sandboxID));
      token = res.headers.get('x-next-token');
    } while (token !== null);
    assert.equal(new Set(seen).size, seen.length);
    assert.equal(seen.length, 6);
    await Promise.all(sandboxes.slice(1).map((s) => s.kill()));
    assert.equal(await bindingNode(sandboxes[1]!.sandboxId), null, 'a kill unbinds');
    await sandboxes[0]!.kill();
  });

  it('passes host- and header-routed requests, streams and WebSockets to a sandbox port', async () => {
    const app = await startWsEcho();
    const sbx = await Sandbox.create('base', { ...c.sdk(), timeoutMs: 60_000 });
    try {
      const id = sbx.sandboxId;
      const byHost = { url: c.gateway.url, headers: { host: `${app.port}-${id}.aenv.test` } };
      const byHeaders = {
        url: c.gateway.url,
        headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': String(app.port) },
      };
      for (const route of [byHost, byHeaders]) {
        const streamed = await streamThrough(route);
        assert.deepEqual(streamed, { body: 'first,second', streamed: true });
        assert.equal(await wsEcho(route, `hello ${id}`), `hello ${id}`);
      }
      const unknown = { url: c.gateway.url, headers: { host: `${app.port}-nosuch.aenv.test` } };
      await assert.rejects(wsEcho(unknown, 'x'), /no upgrade: HTTP 502/);
    } finally {
      await sbx.kill();
      await app.close();
    }
  });

  it('resumes a paused sandbox on another node once its node is gone', async () => {
    const sbx = await Sandbox.create('base', { ...c.sdk(), timeoutMs: 120_000 });
    const root = await rootOf(sbx);
    await sbx.files.write(`${root}/kept.txt`, 'survives the move');
    const home = await bindingNode(sbx.sandboxId);
    assert.equal(await sbx.pause(), true);
    const b = await clientOf().hgetall(keys.sandbox(sbx.sandboxId));
    assert.equal(b.state, 'paused');
    assert.ok(
      b.export !== undefined && b.export !== '',
      'the pause was exported before it was acknowledged',
    );
    const i = Number(String(home).split('-')[1]);
    await c.crashNode(i);
    await until('the node to show as lost', async () => {
      const n = (await (await gw(`/nodes/${home}`)).json()) as { status: string };
      return n.status === 'lost';
    });
    const back = await Sandbox.connect(sbx.sandboxId, { ...c.sdk(), timeoutMs: 120_000 });
    const now = await bindingNode(sbx.sandboxId);
    assert.notEqual(now, home, 'it moved');
    assert.equal(await back.files.read(`${root}/kept.txt`), 'survives the move');
    assert.equal((await back.commands.run('echo alive')).stdout.trim(), 'alive');
    // The lost node comes back and drops its stale copy.
    await c.restartNode(i);
    const h = c.nodes[i - 1]!;
    assert.equal(
      h.node.orchestrator.list().some((r) => r.id === sbx.sandboxId),
      false,
    );
    await back.kill();
  });

  it('keeps every sandbox reachable across a gateway and scheduler restart', async () => {
    const sbx = await Sandbox.create('base', { ...c.sdk(), timeoutMs: 120_000 });
    await c.restartControlPlane();
    const again = await Sandbox.connect(sbx.sandboxId, { ...c.sdk() });
    assert.equal((await again.commands.run('echo still-here')).stdout.trim(), 'still-here');
    await again.kill();
  });

  it('serves the same cluster through two gateway replicas at once', async () => {
    const second = await c.startGatewayReplica();
    try {
      const via = (url: string) => ({
        ...c.sdk(),
        apiUrl: url,
        sandboxUrl: url,
        timeoutMs: 60_000,
      });
      const urls = [c.gateway.url, second.url];
      const made = await Promise.all(
        Array.from({ length: 6 }, (_, k) => Sandbox.create('base', via(urls[k % 2]!))),
      );
      const homes = new Set(await Promise.all(made.map((s) => bindingNode(s.sandboxId))));
      assert.equal(homes.size, 3, 'placements through either replica see each other');
      for (const [k, s] of made.entries()) {
        // Each sandbox through the replica that did not create it.
        const other = await Sandbox.connect(s.sandboxId, via(urls[(k + 1) % 2]!));
        assert.equal((await other.commands.run('echo across')).stdout.trim(), 'across');
      }
      const listed = await Sandbox.list(via(second.url)).nextItems();
      for (const s of made) assert.ok(listed.some((l) => l.sandboxId === s.sandboxId));
      await Promise.all(made.map((s) => s.kill()));
    } finally {
      await second.close();
    }
  });

  it('places nothing new on a draining node and moves its paused sandboxes on resume', async () => {
    const before = await Sandbox.create('base', { ...c.sdk(), timeoutMs: 120_000 });
    const home = String(await bindingNode(before.sandboxId));
    await before.pause();
    const res = await gw(`/nodes/${home}`, {
      method: 'POST',
      body: JSON.stringify({ status: 'draining' }),
    });
    assert.equal(res.status, 204);
    await until('the node to report draining', async () => {
      const n = (await (await gw(`/nodes/${home}`)).json()) as { status: string };
      return n.status === 'draining';
    });
    // `aenv nodes` through the gateway shows every node and the drain.
    const cli = await runAenv(['nodes', '-o', 'json'], {
      AENV_API_URL: c.gateway.url,
      AENV_API_KEY: c.key,
      AENV_CLI_CONFIG: '/nonexistent/aenv-cli.json',
    });
    assert.equal(cli.code, 0, cli.stderr);
    const listed = (JSON.parse(cli.stdout) as { nodeId: string; status: string }[]).map(
      (n) => [n.nodeId, n.status] as const,
    );
    assert.equal(listed.length, 3);
    assert.ok(
      listed.some(([id, st]) => id === home && st === 'draining'),
      JSON.stringify(listed),
    );
    const made = await Promise.all(
      Array.from({ length: 3 }, () => Sandbox.create('base', { ...c.sdk(), timeoutMs: 120_000 })),
    );
    for (const s of made) assert.notEqual(await bindingNode(s.sandboxId), home);
    const resumed = await Sandbox.connect(before.sandboxId, { ...c.sdk(), timeoutMs: 120_000 });
    assert.notEqual(await bindingNode(before.sandboxId), home, 'resumed elsewhere');
    await gw(`/nodes/${home}`, { method: 'POST', body: JSON.stringify({ status: 'ready' }) });
    await Promise.all([...made, resumed].map((s) => s.kill()));
  });

  it('spreads a fork across nodes from an exported snapshot when asked', async () => {
    const src = await Sandbox.create('base', { ...c.sdk(), timeoutMs: 120_000 });
    await src.files.write(`${await rootOf(src)}/fork-me.txt`, 'from the parent');
    const res = await gw(`/sandboxes/${src.sandboxId}/fork`, {
      method: 'POST',
      body: JSON.stringify({ count: 3, spread: true }),
    });
    assert.equal(res.status, 201);
    const children = ((await res.json()) as { sandbox?: { sandboxID: string } }[]).map(
      (e) => e.sandbox?.sandboxID,
    );
    assert.equal(children.filter((id) => id !== undefined).length, 3);
    const homes = new Set(await Promise.all(children.map((id) => bindingNode(String(id)))));
    assert.ok(homes.size >= 2, 'children on more than one node');
    for (const id of children) {
      const child = await Sandbox.connect(String(id), { ...c.sdk() });
      // Stand-in machines restored from a snapshot get a copy of its root.
      assert.equal(await child.files.read(`${await rootOf(child)}/fork-me.txt`), 'from the parent');
      await child.kill();
    }
    await src.kill();
  });

  it('syncs a template made on one node to every node', async () => {
    const one = c.nodes[0]!;
    const base = one.state.templates.find('base')!;
    one.state.templates.put({
      ...base,
      id: 'tpl-x',
      alias: 'tpl-x',
      createdAt: new Date().toISOString(),
    });
    await one.member.syncTemplates();
    for (const h of c.nodes.slice(1)) {
      await h.member.syncTemplates();
      assert.ok(h.state.templates.find('tpl-x') !== undefined, `${h.id} has tpl-x`);
    }
    const listed = (await (await gw('/templates')).json()) as { templateID: string }[];
    assert.equal(listed.filter((t) => t.templateID === 'tpl-x').length, 1, 'listed once');
    assert.equal((await gw('/templates/tpl-x', { method: 'DELETE' })).status, 204);
    for (const h of c.nodes) {
      await h.member.syncTemplates();
      assert.equal(h.state.templates.find('tpl-x'), undefined, `${h.id} deleted tpl-x`);
    }
  });

  it('enforces tenant limits and hides other tenants sandboxes', async () => {
    const acme = { ...c.sdk(), apiKey: `e2b_${'a'.repeat(40)}` };
    const a1 = await Sandbox.create('base', { ...acme, timeoutMs: 60_000 });
    const a2 = await Sandbox.create('base', { ...acme, timeoutMs: 60_000 });
    await assert.rejects(Sandbox.create('base', { ...acme }), /2 sandboxes|limit/i);
    const mine = await Sandbox.list({ ...c.sdk() }).nextItems();
    assert.equal(
      mine.some((s) => s.sandboxId === a1.sandboxId),
      false,
      'default tenant does not see acme',
    );
    const theirs = await Sandbox.list({ ...acme }).nextItems();
    assert.equal(theirs.length, 2);
    await Promise.all([a1.kill(), a2.kill()]);
  });

  it('binds a sandbox made directly on a node, and unbinds one gone behind its back', async () => {
    const h = c.nodes.find((n) => n.up)!;
    const res = await fetch(`${h.node.url}/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': c.key, 'content-type': 'application/json' },
      body: JSON.stringify({ templateID: 'base', timeout: 60 }),
    });
    const { sandboxID } = (await res.json()) as { sandboxID: string };
    await until('the scheduler to bind it', async () => (await bindingNode(sandboxID)) === h.id);
    await clientOf().sadd(keys.nodeSandboxes(h.id), 'ghost');
    await clientOf().hset(keys.sandbox('ghost'), {
      node: h.id,
      updatedAt: new Date(0).toISOString(),
    });
    await until(
      'the scheduler to drop the ghost',
      async () => (await bindingNode('ghost')) === null,
    );
    await fetch(`${h.node.url}/sandboxes/${sandboxID}`, {
      method: 'DELETE',
      headers: { 'x-api-key': c.key },
    });
  });
});
