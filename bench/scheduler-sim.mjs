#!/usr/bin/env node
/**
 * The scheduler placing sandboxes on synthetic nodes, no VMs: 100,000
 * placements on 1,000 nodes of three sizes (each holding 15 of 20
 * templates), with the control plane's own placement code (the
 * `PlacementIndex` the scheduler plans with, and the strategies), every
 * placement seeing the previous ones as the pending entries a gateway
 * records. For
 * each strategy side by side: placements per CPU second (one gateway
 * process; the Redis round trip of a real placement is not included), how
 * evenly the load
 * spread (standard deviation and range of node load, sandboxes per node),
 * how often a sandbox landed where its template was already warm, and how
 * many found no room.
 *
 *   node bench/scheduler-sim.mjs [--quick] [--nodes 1000] [--sandboxes 100000]
 *
 * Needs a built repo (`npm run build`); runs anywhere (no root, no KVM).
 *
 * @module
 */
import { DEFAULT_LIMITS, PlacementIndex, createStrategy, syntheticNode } from '@aenv/control-plane';
import { runBench } from './lib/bench-main.mjs';

const SIZES = [
  { vcpus: 16, memoryMiB: 65_536, slots: 128 },
  { vcpus: 32, memoryMiB: 131_072, slots: 256 },
  { vcpus: 64, memoryMiB: 262_144, slots: 512 },
];
const SHAPES = [
  { vcpus: 1, memoryMiB: 512 },
  { vcpus: 2, memoryMiB: 1024 },
  { vcpus: 4, memoryMiB: 2048 },
];

/** A small deterministic PRNG, so every strategy sees the same cluster and requests. */
function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function cluster(n, templates, random) {
  return Array.from({ length: n }, (_, i) => {
    const size = SIZES[i % SIZES.length];
    const held = [...templates].sort(() => random() - 0.5).slice(0, 15);
    return syntheticNode(`n${i}`, { ...size, templates: held });
  });
}

/** Requests: templates with a skewed popularity, three machine shapes. */
function requests(count, templates, random) {
  return Array.from({ length: count }, () => {
    const t =
      templates[Math.min(templates.length - 1, Math.floor(templates.length * random() ** 2))];
    const shape = SHAPES[Math.floor(random() * SHAPES.length)];
    return { ...shape, templateId: t, requireTemplate: true };
  });
}

function stddev(xs) {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
}

/** Places every request; returns the timing and the final cluster. */
function simulate(initial, reqs, strategy) {
  const counts = new Map(initial.map((n) => [n.id, 0]));
  let warmHits = 0;
  let rejected = 0;
  // CPU time, not wall time: the figure must not depend on what else the host runs.
  const cpu0 = process.cpuUsage();
  const index = new PlacementIndex(initial, DEFAULT_LIMITS);
  for (const req of reqs) {
    let chosen;
    try {
      chosen = index.place(req, strategy);
    } catch {
      rejected++;
      continue;
    }
    if (chosen.warm > 0) warmHits++;
    // The sandbox is pending on its node, bound to it, and runs its template there.
    index.record(chosen.node.id, req, { warm: true, bound: true });
    counts.set(chosen.node.id, counts.get(chosen.node.id) + 1);
  }
  const used = process.cpuUsage(cpu0);
  const ms = (used.user + used.system) / 1000;
  const loads = initial.map((n) => index.loadOf(n.id) ?? 1);
  return {
    ms,
    counts: [...counts.values()],
    loads,
    warmHits,
    rejected,
    placed: reqs.length - rejected,
  };
}

await runBench({
  name: 'scheduler-sim',
  title: 'Scheduler simulation: sandboxes placed on synthetic nodes (no VMs)',
  options: {
    nodes: { default: 1000, quick: 100, doc: 'synthetic nodes' },
    sandboxes: { default: 100_000, quick: 5000, doc: 'placements' },
    strategies: {
      default: ['spread', 'pack', 'round-robin', 'random'],
      doc: 'strategies compared',
    },
  },
  async run({ params, report, progress }) {
    const templates = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const results = new Map();
    for (const name of params.strategies) {
      const random = prng(42);
      const initial = cluster(params.nodes, templates, random);
      const reqs = requests(params.sandboxes, templates, random);
      progress(`${name}: placing ${reqs.length} sandboxes on ${initial.length} nodes`);
      const r = simulate(initial, reqs, createStrategy(name, { random: prng(7) }));
      results.set(name, r);
      report.section(name);
      report.value('placements per CPU second', Math.round((r.placed / r.ms) * 1000), '/s');
      report.value(
        'CPU time per placement',
        Math.round((r.ms * 1000) / Math.max(1, r.placed)),
        'µs',
      );
      report.value('node load: standard deviation', Math.round(stddev(r.loads) * 1000) / 10, '%');
      report.value('node load: min', Math.round(Math.min(...r.loads) * 1000) / 10, '%');
      report.value('node load: max', Math.round(Math.max(...r.loads) * 1000) / 10, '%');
      report.value('sandboxes per node: min', Math.min(...r.counts), 'sandboxes');
      report.value('sandboxes per node: max', Math.max(...r.counts), 'sandboxes');
      report.value(
        'placed where the template was warm',
        Math.round((r.warmHits / Math.max(1, r.placed)) * 1000) / 10,
        '%',
      );
      report.value('found no room', r.rejected, 'sandboxes');
    }
    const spread = results.get('spread');
    for (const [name, r] of results) {
      if (name === 'spread' || spread === undefined) continue;
      report.ratio(`placements/s: spread / ${name}`, spread.placed / spread.ms, r.placed / r.ms);
      report.ratio(`load stddev: ${name} / spread`, stddev(r.loads), stddev(spread.loads));
    }
    report.note(
      'Node sizes 16/32/64 vCPUs (×8 overcommit), 64/128/256 GiB (×2), 128/256/512 slots; ' +
        'sandboxes of 1/2/4 vCPUs and 0.5/1/2 GiB; 20 templates, 15 per node, skewed popularity.',
    );
  },
});
