// The cluster end to end on microVMs (QEMU under TCG): three node daemons,
// each in its own network namespace as a separate host, behind the gateway
// and the scheduler, with a real redis-server and an S3-compatible server
// (s3rver) — `aenv dev cluster` laying it out. The unmodified e2b SDK
// creates 12 sandboxes through the gateway; they spread; commands and files
// work through the gateway's proxy; the list shows all 12. A paused sandbox
// comes back on another node, files and memory intact, after its node is
// killed -9; the gateway and scheduler restart without losing anything; a
// template built through the gateway reaches every node. `aenv dev cluster
// down` (from the recorded state, as another process would) leaves nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { redisServerAvailable } from '@aenv/control-plane/testing';
import { Sandbox } from 'e2b';
import { devCommand } from '../src/commands/dev-cluster.js';
import { DevCluster } from '../src/dev-cluster/dev-cluster.js';
import { networkLeftovers } from '../src/dev-cluster/host-network.js';

const TEST_CACHE = process.env.AENV_TEST_CACHE ?? '/var/tmp/aenv-test-cache';
const skip = redisServerAvailable()
  ? false
  : 'redis-server is not installed (apt install redis-server)';
const prefix = `c${Math.floor(Math.random() * 9000 + 1000)}`;
let dir: string;
let c: DevCluster;

/** A /24 no interface of this host uses yet. */
function freeSubnet(): string {
  const used = execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' });
  for (let b = 230; b < 250; b++) if (!used.includes(` 10.${b}.0.`)) return `10.${b}`;
  throw new Error('no free 10.x.0.0/24 for the test bridge');
}

async function nodeApi(i: number, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${c.nodeUrl(i)}${path}`, {
    ...init,
    headers: { 'x-api-key': c.apiKey, ...init.headers },
  });
}

async function gw(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${c.gatewayUrl}${path}`, {
    ...init,
    headers: { 'x-api-key': c.apiKey, 'content-type': 'application/json', ...init.headers },
  });
}

/** The node a sandbox is on, as the gateway sees it. */
async function homeOf(id: string): Promise<number> {
  for (let i = 1; i <= 3; i++) {
    const res = await nodeApi(i, `/sandboxes/${id}`).catch(() => undefined); // a killed node refuses
    if (res?.status === 200) return i;
  }
  return 0;
}

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(500);
  }
}

describe('a cluster of three microVM nodes', { skip, timeout: 30 * 60_000 }, () => {
  const sdk = () => ({ apiKey: c.apiKey, apiUrl: c.gatewayUrl, sandboxUrl: c.gatewayUrl });

  before(async () => {
    dir = mkdtempSync(join('/var/tmp', 'aenv-cluster-vm-'));
    c = await DevCluster.up(
      {
        dir,
        nodes: 3,
        store: 's3',
        prefix,
        subnet: freeSubnet(),
        gatewayHost: '127.0.0.1',
        gatewayPort: 18000 + Math.floor(Math.random() * 1000),
        s3Port: 19000 + Math.floor(Math.random() * 1000),
        artifactsDir: TEST_CACHE,
        logLevel: process.env.AENV_TEST_LOG_LEVEL ?? 'info',
        attached: true,
        nodeEnv: {
          AENV_MAX_SANDBOXES: '8',
          AENV_NETWORK_POOL_LOW: '1',
          AENV_NETWORK_POOL_HIGH: '2',
          AENV_PAUSE_ON_SHUTDOWN: 'false',
          AENV_CLUSTER_HEARTBEAT_TTL_SECONDS: '6',
        },
      },
      (msg) => console.log(`dev cluster: ${msg}`),
    );
  });

  after(async () => {
    const slots = [1, 2, 3].map((i) => `${prefix}${i}`);
    if (c !== undefined) {
      // What `aenv dev cluster down` runs: the cluster as recorded in its directory.
      c.detach();
      assert.equal(await devCommand(['cluster', 'down', '--dir', dir]), 0);
    }
    const qemus = execFileSync('sh', ['-c', 'pgrep -af qemu-system || true'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => dir !== undefined && l.includes(dir));
    assert.deepEqual(qemus, [], 'QEMU processes left behind');
    if (c !== undefined)
      assert.deepEqual(await networkLeftovers(c.network, slots), [], 'network left behind');
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates 12 sandboxes through the gateway; they spread; the data plane and the list work', async () => {
    const t0 = performance.now();
    const made: Sandbox[] = [];
    for (let batch = 0; batch < 3; batch++) {
      made.push(
        ...(await Promise.all(
          Array.from({ length: 4 }, () => Sandbox.create('base', { ...sdk(), timeoutMs: 600_000 })),
        )),
      );
    }
    console.log(`12 creates through the gateway: ${Math.round(performance.now() - t0)} ms`);
    const homes = await Promise.all(made.map((s) => homeOf(s.sandboxId)));
    const counts = [1, 2, 3].map((i) => homes.filter((h) => h === i).length);
    console.log(`sandboxes per node: ${counts.join(' / ')}`);
    assert.ok(
      counts.every((n) => n >= 2),
      `spread over every node: ${counts.join('/')}`,
    );
    await Promise.all(
      made.map(async (s) => {
        const out = await s.commands.run('echo hello-$(hostname)');
        assert.match(out.stdout.trim(), /^hello-/);
        await s.files.write('/home/user/id.txt', s.sandboxId);
        assert.equal(await s.files.read('/home/user/id.txt'), s.sandboxId);
      }),
    );
    const listed = new Set((await Sandbox.list({ ...sdk() }).nextItems()).map((s) => s.sandboxId));
    for (const s of made) assert.ok(listed.has(s.sandboxId), `${s.sandboxId} is listed`);
    assert.equal(listed.size, 12);
    await Promise.all(made.map((s) => s.kill()));
  });

  it('resumes a paused sandbox on another node after its node is killed -9, files and memory intact', async () => {
    const sbx = await Sandbox.create('base', { ...sdk(), timeoutMs: 600_000 });
    await sbx.files.write('/home/user/disk.txt', 'on the disk');
    await sbx.commands.run('echo in-memory > /dev/shm/mem.txt');
    await sbx.commands.run('sleep 100000', { background: true });
    const home = await homeOf(sbx.sandboxId);
    const t0 = performance.now();
    assert.equal(await sbx.pause(), true);
    console.log(`pause with export: ${Math.round(performance.now() - t0)} ms`);
    await c.stopNode(home, 'SIGKILL');
    await until(
      'the killed node to show as lost',
      async () =>
        ((await (await gw(`/nodes/${c.nodeId(home)}`)).json()) as { status: string }).status ===
        'lost',
      60_000,
    );
    const t1 = performance.now();
    const back = await Sandbox.connect(sbx.sandboxId, { ...sdk(), timeoutMs: 600_000 });
    console.log(
      `resume on another node (move + restore): ${Math.round(performance.now() - t1)} ms`,
    );
    const now = await homeOf(sbx.sandboxId);
    assert.ok(now !== 0 && now !== home, `moved from node ${home} to node ${now}`);
    assert.equal(await back.files.read('/home/user/disk.txt'), 'on the disk');
    assert.equal((await back.commands.run('cat /dev/shm/mem.txt')).stdout.trim(), 'in-memory');
    const sleeper = await back.commands.run("pgrep -fx 'sleep 100000' || echo none");
    assert.notEqual(sleeper.stdout.trim(), 'none', 'the process survived the move');
    // The killed node comes back and drops its stale copy.
    await c.startNode(home);
    await until(
      'the returning node to drop the moved sandbox',
      async () => (await nodeApi(home, `/sandboxes/${sbx.sandboxId}`)).status === 404,
      30_000,
    );
    await back.kill();
  });

  it('keeps every sandbox reachable when the gateway and the scheduler restart', async () => {
    const sbx = await Sandbox.create('base', { ...sdk(), timeoutMs: 600_000 });
    await c.stopGateway();
    await c.stopScheduler();
    await c.startScheduler();
    await c.startGateway();
    const again = await Sandbox.connect(sbx.sandboxId, { ...sdk() });
    assert.equal((await again.commands.run('echo still-here')).stdout.trim(), 'still-here');
    const listed = await Sandbox.list({ ...sdk() }).nextItems();
    assert.ok(listed.some((s) => s.sandboxId === sbx.sandboxId));
    await again.kill();
  });

  it('creates a template built through the gateway on every node', async () => {
    const made = await gw('/v3/templates', {
      method: 'POST',
      body: JSON.stringify({ name: 'cluster-built' }),
    });
    assert.equal(made.status, 202);
    const { templateID, buildID } = (await made.json()) as { templateID: string; buildID: string };
    const start = await gw(`/v2/templates/${templateID}/builds/${buildID}`, {
      method: 'POST',
      body: JSON.stringify({
        fromTemplate: 'base',
        steps: [{ type: 'RUN', args: ['echo built-once > /etc/cluster-mark', 'root'] }],
      }),
    });
    assert.equal(start.status, 202);
    await until(
      'the build to finish',
      async () => {
        const s = (await (
          await gw(`/templates/${templateID}/builds/${buildID}/status`)
        ).json()) as { status: string };
        if (s.status === 'error') throw new Error(`build failed: ${JSON.stringify(s)}`);
        return s.status === 'ready';
      },
      10 * 60_000,
    );
    await until(
      'every node to hold the template',
      async () => {
        for (let i = 1; i <= 3; i++) {
          const list = (await (await nodeApi(i, '/templates')).json()) as { templateID: string }[];
          if (!list.some((t) => t.templateID === templateID)) return false;
        }
        return true;
      },
      5 * 60_000,
    );
    const sbx = await Sandbox.create('cluster-built', { ...sdk(), timeoutMs: 600_000 });
    assert.equal((await sbx.commands.run('cat /etc/cluster-mark')).stdout.trim(), 'built-once');
    await sbx.kill();
  });
});
