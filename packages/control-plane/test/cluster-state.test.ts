// The cluster state against a real redis-server: node views (live, lost,
// draining), bindings with their node and tenant sets, pending placements,
// leases, and CLUSTER_STATE_UNAVAILABLE when Redis is gone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AenvError, clusterKeys, type NodeReport } from '@aenv/shared';
import type { Redis } from 'ioredis';
import { ClusterState } from '../src/state/cluster-state.js';
import { connectRedis } from '../src/state/redis-connection.js';
import { syntheticNode } from '../src/scheduler/synthetic-node.js';
import { redisServerAvailable, startRedisServer, type TestRedis } from '../src/testing/index.js';

const skip = redisServerAvailable()
  ? false
  : 'redis-server is not installed (apt install redis-server)';
let server: TestRedis;
let redis: Redis;
let state: ClusterState;
const keys = clusterKeys('t:');

function report(id: string, at = new Date()): NodeReport {
  return { ...syntheticNode(id).report, reportedAt: at.toISOString() };
}

describe('ClusterState', { skip }, () => {
  before(async () => {
    server = await startRedisServer();
    redis = await connectRedis(server.url);
    state = new ClusterState(redis, 't:');
  });
  after(async () => {
    redis?.disconnect();
    await server?.close();
  });

  it('shows live, lost and draining nodes', async () => {
    await redis.sadd(keys.nodes, 'n1', 'n2');
    await redis.set(keys.node('n1'), JSON.stringify(report('n1')), 'EX', 30);
    await redis.set(keys.nodeLast('n2'), JSON.stringify(report('n2')));
    let nodes = await state.nodes();
    assert.deepEqual(
      nodes.map((n) => [n.id, n.status, n.alive]),
      [
        ['n1', 'ready', true],
        ['n2', 'lost', false],
      ],
    );
    await state.setNodeStatus('n1', 'draining');
    nodes = await state.nodes();
    assert.equal(nodes[0]?.status, 'draining');
    await state.setNodeStatus('n1', 'ready');
    assert.equal((await state.node('n1'))?.status, 'ready');
    assert.equal(await state.node('nope'), undefined);
  });

  it('counts placements made after the node report, and drops failed ones', async () => {
    await redis.set(keys.node('n1'), JSON.stringify(report('n1', new Date(Date.now() - 5000))));
    await state.addPending('n1', { vcpus: 2, memoryMiB: 512 });
    const token = await state.addPending('n1', { vcpus: 1, memoryMiB: 256 });
    assert.deepEqual((await state.node('n1'))?.pending, { count: 2, vcpus: 3, memoryMiB: 768 });
    await state.dropPending('n1', token);
    assert.equal((await state.node('n1'))?.pending.count, 1);
    await redis.set(keys.node('n1'), JSON.stringify(report('n1', new Date(Date.now() + 1000))));
    assert.equal((await state.node('n1'))?.pending.count, 0, 'a newer report covers them');
  });

  it('binds, rebinds and unbinds sandboxes with their node and tenant sets', async () => {
    await state.bind('s1', { node: 'n1', tenant: 'acme', state: 'running', templateId: 'base' });
    await state.bind('s2', { node: 'n1', tenant: 'acme', state: 'running' });
    assert.equal((await state.binding('s1'))?.node, 'n1');
    assert.equal(await state.tenantCount('acme'), 2);
    assert.equal((await state.node('n1'))?.bound, 2);
    await state.rebind('s1', 'n1', 'n2');
    assert.deepEqual(await state.nodeSandboxes('n2'), ['s1']);
    await state.updateBinding('s1', { state: 'paused', export: 'snap1' });
    const b = await state.bindings(['s1', 's2', 'missing']);
    assert.equal(b.get('s1')?.export, 'snap1');
    assert.equal(b.has('missing'), false);
    await state.unbind('s1');
    assert.equal(await state.binding('s1'), undefined);
    assert.deepEqual(await state.nodeSandboxes('n2'), []);
    assert.deepEqual(await state.tenantSandboxes('acme'), ['s2']);
  });

  it('grants a lease to one holder at a time', async () => {
    const t1 = await state.lock('loop', 5000);
    assert.ok(t1 !== undefined);
    assert.equal(await state.lock('loop', 5000), undefined);
    assert.equal(await state.renewLock('loop', 'not-mine', 5000), false);
    assert.equal(await state.renewLock('loop', t1, 5000), true);
    await state.unlock('loop', 'not-mine');
    assert.equal(await state.lock('loop', 5000), undefined, 'only the holder releases');
    await state.unlock('loop', t1);
    assert.ok((await state.lock('loop', 5000)) !== undefined);
  });

  it('answers CLUSTER_STATE_UNAVAILABLE once Redis is gone', async () => {
    const other = await startRedisServer();
    const client = await connectRedis(other.url);
    const s = new ClusterState(client);
    await other.close();
    await assert.rejects(
      s.nodes(),
      (e: unknown) => e instanceof AenvError && e.code === 'CLUSTER_STATE_UNAVAILABLE',
    );
    client.disconnect();
  });
});
