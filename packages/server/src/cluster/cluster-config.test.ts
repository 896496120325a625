import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '@aenv/shared';
import { clusterConfigSchema, resolveClusterSettings } from './cluster-config.js';

const load = (env: Record<string, string>) => loadConfig(clusterConfigSchema, { env });

describe('the cluster config section', () => {
  it('leaves a node standalone without a Redis URL', () => {
    assert.equal(resolveClusterSettings(load({})), undefined);
  });

  it('resolves a clustered node from the environment', () => {
    const s = resolveClusterSettings(
      load({
        AENV_CLUSTER_REDIS_URL: 'redis://10.0.0.1:6379',
        AENV_CLUSTER_NODE_ID: 'node-1',
        AENV_CLUSTER_SHARED_STORE: 'fs',
        AENV_CLUSTER_SHARED_DIR: '/mnt/shared',
      }),
    );
    assert.equal(s?.nodeId, 'node-1');
    assert.equal(s?.heartbeatMs, 2000);
    assert.deepEqual(s?.sharedStore, { kind: 'fs', root: '/mnt/shared' });
  });

  it('names the key of a bad value', () => {
    const base = { AENV_CLUSTER_REDIS_URL: 'redis://x' };
    assert.throws(
      () => resolveClusterSettings(load({ ...base, AENV_CLUSTER_NODE_ID: 'no spaces' })),
      /cluster\.nodeId/,
    );
    assert.throws(
      () => resolveClusterSettings(load({ ...base, AENV_CLUSTER_SHARED_STORE: 'fs' })),
      /cluster\.sharedDir/,
    );
    assert.throws(
      () =>
        resolveClusterSettings(
          load({
            ...base,
            AENV_CLUSTER_HEARTBEAT_SECONDS: '10',
            AENV_CLUSTER_HEARTBEAT_TTL_SECONDS: '5',
          }),
        ),
      /heartbeatTtlSeconds/,
    );
  });
});
