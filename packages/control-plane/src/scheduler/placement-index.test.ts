import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import type { ClusterNode } from '../state/cluster-node.js';
import { PlacementIndex } from './placement-index.js';
import {
  DEFAULT_LIMITS,
  findCandidates,
  withPlacement,
  type Candidate,
  type PlacementRequest,
} from './placement.js';
import { STRATEGY_NAMES, createStrategy, type PlacementStrategy } from './strategies.js';
import { syntheticNode } from './synthetic-node.js';

/** A seeded PRNG (mulberry32), so both sides draw the same numbers. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEMPLATES = ['t0', 't1', 't2', 't3'];
const STATUSES = ['ready', 'ready', 'ready', 'ready', 'draining', 'lost'] as const;

function pick<T>(xs: readonly T[], r: () => number): T {
  return xs[Math.floor(r() * xs.length)] as T;
}

function randomCluster(n: number, r: () => number): ClusterNode[] {
  return Array.from({ length: n }, (_, i) =>
    syntheticNode(`n${String(i).padStart(3, '0')}`, {
      vcpus: pick([2, 4, 8], r),
      memoryMiB: pick([4096, 8192], r),
      slots: pick([4, 8, 16], r),
      running: Math.floor(r() * 4),
      usedVcpus: Math.floor(r() * 8),
      diskFreeMiB: r() < 0.05 ? 10 : 100_000,
      status: pick(STATUSES, r),
      driver: r() < 0.2 ? 'firecracker' : 'qemu',
      compat: r() < 0.2 ? 'c2' : 'c1',
      templates: TEMPLATES.filter(() => r() < 0.6),
      warm: { t0: Math.floor(r() * 3) },
      memoryBases: r() < 0.3 ? ['b1'] : [],
      bound: Math.floor(r() * 3),
    }),
  );
}

function randomRequest(r: () => number, ids: readonly string[]): PlacementRequest {
  return {
    vcpus: pick([1, 2, 4], r),
    memoryMiB: pick([512, 1024, 2048], r),
    templateId: r() < 0.9 ? pick(TEMPLATES, r) : undefined,
    requireTemplate: r() < 0.5,
    memoryBase: r() < 0.3 ? 'b1' : undefined,
    driver: r() < 0.2 ? 'qemu' : undefined,
    compat: r() < 0.2 ? 'c1' : undefined,
    exclude: r() < 0.2 ? [pick(ids, r)] : undefined,
  };
}

/** The reference: the old simulation's bookkeeping on node objects. */
function referencePlaced(n: ClusterNode, req: PlacementRequest): ClusterNode {
  const placed = withPlacement(n, req);
  const t = req.templateId;
  if (t === undefined) return { ...placed, bound: placed.bound + 1 };
  const warm = { ...placed.report.warm, [t]: (placed.report.warm[t] ?? 0) + 1 };
  return { ...placed, bound: placed.bound + 1, report: { ...placed.report, warm } };
}

describe('PlacementIndex', () => {
  for (const name of STRATEGY_NAMES) {
    it(`chooses exactly what findCandidates + ${name} chooses, placement after placement`, () => {
      for (let seed = 1; seed <= 5; seed++) {
        const r = prng(seed);
        let ref = randomCluster(40, r);
        const ids = ref.map((n) => n.id);
        const index = new PlacementIndex(ref, DEFAULT_LIMITS);
        const refStrategy = createStrategy(name, { random: prng(seed * 7) });
        const idxStrategy = createStrategy(name, { random: prng(seed * 7) });
        let placed = 0;
        for (let k = 0; k < 150; k++) {
          const req = randomRequest(r, ids);
          const { candidates, rejected } = findCandidates(ref, req);
          const got = index.candidates(req);
          assert.deepEqual(got.rejected, rejected, `rejections, step ${k}`);
          assert.deepEqual(
            got.candidates.map((c) => [c.node.id, c.load, c.warm, c.holdsBase, c.holdsTemplate]),
            candidates.map((c) => [c.node.id, c.load, c.warm, c.holdsBase, c.holdsTemplate]),
          );
          if (candidates.length === 0) {
            assert.throws(
              () => index.place(req, idxStrategy),
              (e: unknown) => e instanceof AenvError && e.code.startsWith('CLUSTER_NO_'),
            );
            continue;
          }
          const want = refStrategy.choose(candidates, req);
          const chosen = index.place(req, idxStrategy);
          assert.equal(chosen.node.id, want.node.id, `seed ${seed} step ${k}`);
          assert.equal(chosen.load, want.load);
          index.record(chosen.node.id, req, { warm: true, bound: true });
          ref = ref.map((n) => (n.id === want.node.id ? referencePlaced(n, req) : n));
          placed++;
        }
        assert.ok(placed > 20, `seed ${seed}: only ${placed} placements were possible`);
      }
    });
  }

  it('shows recorded placements in node views and loads', () => {
    const index = new PlacementIndex([syntheticNode('a', { slots: 4 })]);
    index.record('a', { vcpus: 2, memoryMiB: 512 }, { bound: true });
    index.record('a', { vcpus: 2, memoryMiB: 512 });
    assert.deepEqual(index.node('a')?.pending, { count: 2, vcpus: 4, memoryMiB: 1024 });
    assert.equal(index.node('a')?.bound, 1);
    assert.equal(index.loadOf('a'), 0.5);
    index.record('a', { vcpus: 1, memoryMiB: 1 });
    index.record('a', { vcpus: 1, memoryMiB: 1 });
    assert.equal(index.loadOf('a'), 1);
    assert.throws(
      () => index.place({ vcpus: 1, memoryMiB: 1 }, createStrategy('spread')),
      /no node can take the sandbox \(1 slots\)/,
    );
  });

  it('counts warm placements recorded before a template was first asked for', () => {
    const index = new PlacementIndex([syntheticNode('a', { templates: ['t1'], warm: { t1: 1 } })]);
    index.record('a', { vcpus: 1, memoryMiB: 1, templateId: 't1' }, { warm: true });
    assert.equal(
      index.candidates({ vcpus: 1, memoryMiB: 1, templateId: 't1' }).candidates[0]?.warm,
      2,
    );
    index.record('a', { vcpus: 1, memoryMiB: 1, templateId: 't1' }, { warm: true });
    assert.equal(
      index.candidates({ vcpus: 1, memoryMiB: 1, templateId: 't1' }).candidates[0]?.warm,
      3,
    );
  });

  it('hands strategies without chooseIn the candidate list', () => {
    const seen: string[][] = [];
    const last: PlacementStrategy = {
      name: 'last',
      choose: (cs) => {
        seen.push(cs.map((c) => c.node.id));
        return cs[cs.length - 1] as Candidate;
      },
    };
    const nodes = ['a', 'b', 'c'].map((id) => syntheticNode(id));
    const index = new PlacementIndex([...nodes, syntheticNode('d', { status: 'draining' })]);
    assert.equal(index.place({ vcpus: 1, memoryMiB: 1 }, last).node.id, 'c');
    assert.deepEqual(seen, [['a', 'b', 'c']]);
  });

  it('answers CLUSTER_NO_NODES when every node is lost or there are none', () => {
    for (const nodes of [[], [syntheticNode('a', { status: 'lost' })]]) {
      assert.throws(
        () => new PlacementIndex(nodes).place({ vcpus: 1, memoryMiB: 1 }, createStrategy('pack')),
        (e: unknown) => e instanceof AenvError && e.code === 'CLUSTER_NO_NODES',
      );
    }
  });
});
