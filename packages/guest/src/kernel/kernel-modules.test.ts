import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GUEST_MODULES, moduleLoadOrder, moduleName } from './kernel-modules.js';

const deps: Record<string, string[]> = {
  virtio_mmio: ['virtio', 'virtio_ring'],
  virtio_blk: ['virtio', 'virtio_ring'],
  virtio_net: ['virtio_ring', 'virtio', 'net_failover'],
  net_failover: ['failover'],
  virtio_rng: ['virtio', 'virtio_ring'],
  virtio_balloon: ['virtio', 'virtio_ring'],
  erofs: ['libcrc32c'],
  virtio: ['virtio_ring'],
};

describe('moduleLoadOrder', () => {
  it('puts every module after its dependencies, each once (Debian 6.1 cloud kernel graph)', () => {
    const order = moduleLoadOrder(GUEST_MODULES, (m) => deps[m] ?? []);
    assert.deepEqual(order, [
      'virtio_ring',
      'virtio',
      'virtio_mmio',
      'virtio_blk',
      'failover',
      'net_failover',
      'virtio_net',
      'virtio_rng',
      'virtio_balloon',
      'libcrc32c',
      'erofs',
    ]);
    for (const [m, ds] of Object.entries(deps))
      for (const d of ds) assert.ok(order.indexOf(d) < order.indexOf(m), `${d} before ${m}`);
  });

  it('detects cycles', () => {
    assert.throws(
      () => moduleLoadOrder(['a'], (m) => (m === 'a' ? ['b'] : ['a'])),
      /cycle: a -> b -> a/,
    );
  });

  it('normalizes file names to module names', () => {
    assert.equal(moduleName('virtio-rng.ko'), 'virtio_rng');
    assert.equal(moduleName('erofs'), 'erofs');
  });
});
