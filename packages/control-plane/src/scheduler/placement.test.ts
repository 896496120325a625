import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { findCandidates, loadWith, DEFAULT_LIMITS } from './placement.js';
import { planBatch, placeOne } from './scheduler.js';
import { createStrategy, spreadStrategy } from './strategies.js';
import { syntheticNode } from './synthetic-node.js';

const REQ = { vcpus: 2, memoryMiB: 512, templateId: 'base' };

describe('findCandidates', () => {
  it('filters by status, driver, compat, template and capacity, counting why', () => {
    const nodes = [
      syntheticNode('ok'),
      syntheticNode('lost', { status: 'lost' }),
      syntheticNode('drain', { status: 'draining' }),
      syntheticNode('fc', { driver: 'firecracker' }),
      syntheticNode('other', { compat: 'c2' }),
      syntheticNode('notpl', { templates: ['python'] }),
      syntheticNode('full', { slots: 4, running: 4 }),
      syntheticNode('nocpu', { vcpus: 1, usedVcpus: 7 }),
      syntheticNode('nomem', { memoryMiB: 1024, usedMemoryMiB: 1800 }),
      syntheticNode('nodisk', { diskFreeMiB: 10 }),
    ];
    const { candidates, rejected } = findCandidates(nodes, {
      ...REQ,
      requireTemplate: true,
      driver: 'qemu',
      compat: 'c1',
    });
    assert.deepEqual(
      candidates.map((c) => c.node.id),
      ['ok'],
    );
    assert.deepEqual(rejected, {
      lost: 1,
      draining: 1,
      driver: 1,
      compat: 1,
      template: 1,
      slots: 1,
      vcpus: 1,
      memory: 1,
      disk: 1,
    });
  });

  it('computes load as the fullest resource after the placement', () => {
    const n = syntheticNode('a', { slots: 10, running: 4, vcpus: 4, usedVcpus: 0 });
    // slots 5/10 = 0.5; vcpus 2/(4*8) = 0.0625; memory tiny.
    assert.equal(loadWith(n, REQ, DEFAULT_LIMITS), 0.5);
  });

  it('matches templates by alias and counts warm sandboxes of it', () => {
    const n = syntheticNode('a', { templates: ['t1'], warm: { t1: 3 } });
    const { candidates } = findCandidates([n], { ...REQ, templateId: 't1' });
    assert.equal(candidates[0]?.warm, 3);
    assert.equal(candidates[0]?.holdsTemplate, true);
  });
});

describe('strategies', () => {
  it('spread picks the least loaded node; affinity only breaks near ties', () => {
    const busy = syntheticNode('busy', {
      slots: 10,
      running: 5,
      memoryBases: ['b1'],
      warm: { base: 5 },
    });
    const idle = syntheticNode('idle', { slots: 10, running: 0 });
    const chosen = placeOne([busy, idle], { ...REQ, memoryBase: 'b1' }, spreadStrategy());
    assert.equal(chosen.node.id, 'idle');
    const near = syntheticNode('near', { slots: 100, running: 1, memoryBases: ['b1'] });
    const empty = syntheticNode('empty', { slots: 100, running: 0 });
    const c2 = placeOne([near, empty], { ...REQ, memoryBase: 'b1' }, spreadStrategy());
    assert.equal(c2.node.id, 'near', 'holding the memory base outweighs one sandbox of load');
  });

  it('pack fills the fullest node that fits', () => {
    const a = syntheticNode('a', { slots: 10, running: 9 });
    const b = syntheticNode('b', { slots: 10, running: 3 });
    assert.equal(placeOne([a, b], REQ, createStrategy('pack')).node.id, 'a');
    const full = syntheticNode('a', { slots: 10, running: 10 });
    assert.equal(placeOne([full, b], REQ, createStrategy('pack')).node.id, 'b');
  });

  it('round-robin cycles through candidates in id order', () => {
    const s = createStrategy('round-robin');
    const nodes = [syntheticNode('b'), syntheticNode('a'), syntheticNode('c')];
    const picks = [0, 1, 2, 3].map(() => placeOne(nodes, REQ, s).node.id);
    assert.deepEqual(picks, ['a', 'b', 'c', 'a']);
  });

  it('rejects unknown strategy names', () => {
    assert.throws(() => createStrategy('best'), /unknown placement strategy 'best'/);
  });
});

describe('placeOne and planBatch', () => {
  it('answers CLUSTER_NO_NODES when every node is lost, CLUSTER_NO_CAPACITY when none fits', () => {
    assert.throws(
      () => placeOne([syntheticNode('a', { status: 'lost' })], REQ, spreadStrategy()),
      (e: unknown) => e instanceof AenvError && e.code === 'CLUSTER_NO_NODES',
    );
    assert.throws(
      () => placeOne([syntheticNode('a', { status: 'draining' })], REQ, spreadStrategy()),
      (e: unknown) =>
        e instanceof AenvError && e.code === 'CLUSTER_NO_CAPACITY' && /1 draining/.test(e.message),
    );
  });

  it('spreads a batch evenly and stops when the cluster is full', () => {
    const nodes = ['a', 'b', 'c'].map((id) => syntheticNode(id, { slots: 4 }));
    const shares = planBatch(nodes, REQ, 9, spreadStrategy());
    assert.deepEqual(shares.map((s) => s.count).sort(), [3, 3, 3]);
    const over = planBatch(nodes, REQ, 20, spreadStrategy());
    assert.equal(
      over.reduce((n, s) => n + s.count, 0),
      12,
      'four slots on each of three nodes',
    );
  });
});
