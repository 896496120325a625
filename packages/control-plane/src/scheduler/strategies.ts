/**
 * Placement strategies: given the candidates for one sandbox (never
 * empty), choose one. Pluggable: anything implementing
 * {@link PlacementStrategy} can be given to the scheduler; the built-in
 * ones are selected by name (`scheduler.strategy`).
 *
 * - `spread` (default): the least loaded node, where holding the
 *   snapshot's memory base or running sandboxes of the same template
 *   (warm caches) counts as `affinityWeight` less load each; ties go to the
 *   node with the fewest bound sandboxes, then at random. Affinity never
 *   outweighs a load gap larger than the credit.
 * - `pack`: the most loaded node that still fits, same affinity credit
 *   (fills nodes one after another, leaving others empty for draining).
 * - `round-robin`: candidates in id order, one after the other.
 * - `random`: any candidate.
 *
 * Every built-in strategy also implements `chooseIn`, the same choice over
 * a {@link CandidateSet} (positions, not objects): the placement index
 * (`placement-index.ts`) then chooses in one pass over its arrays without
 * building a candidate object per node. `choose` is `chooseIn` over the
 * candidate array, so both give the same node for the same candidates and
 * random draws.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { Candidate, CandidateTraits, PlacementRequest } from './placement.js';

/** The candidates of one placement, read by position without an object per node. */
export interface CandidateSet {
  readonly size: number;
  /** What strategies weigh of candidate `k`; may be a reused object: read it, never keep it. */
  traits(k: number): CandidateTraits;
  /** Node id of candidate `k`. */
  id(k: number): string;
  /** Sandboxes bound to candidate `k`'s node. */
  bound(k: number): number;
}

/** Chooses one of the candidates. */
export interface PlacementStrategy {
  readonly name: string;
  /** Picks a candidate; `candidates` is never empty. */
  choose(candidates: readonly Candidate[], req: PlacementRequest): Candidate;
  /** The same choice by position in a non-empty set (the fast path, when implemented). */
  readonly chooseIn?: ((set: CandidateSet, req: PlacementRequest) => number) | undefined;
}

/** A candidate array as a {@link CandidateSet}. */
export function candidateSet(candidates: readonly Candidate[]): CandidateSet {
  const at = (k: number): Candidate => candidates[k] as Candidate;
  return {
    size: candidates.length,
    traits: at,
    id: (k) => at(k).node.id,
    bound: (k) => at(k).node.bound,
  };
}

/** A strategy from its positional form. */
function positional(
  name: string,
  chooseIn: (set: CandidateSet, req: PlacementRequest) => number,
): PlacementStrategy {
  return {
    name,
    chooseIn,
    choose: (cs, req) => cs[chooseIn(candidateSet(cs), req)] ?? (cs[0] as Candidate),
  };
}

/** Names of the built-in strategies. */
export const STRATEGY_NAMES = ['spread', 'pack', 'round-robin', 'random'] as const;

/** One of {@link STRATEGY_NAMES}. */
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** Load credit of one affinity (memory base held, or warm template). @default 0.05 */
export const DEFAULT_AFFINITY_WEIGHT = 0.05;

function credit(c: CandidateTraits, weight: number): number {
  return (c.holdsBase ? weight : 0) + (c.warm > 0 ? weight : 0) + (c.holdsTemplate ? 0 : -weight);
}

/**
 * The position with the lowest key (keys within 1e-9 tie); ties go to the
 * node with the fewest bound sandboxes, then to one `random()` draw.
 */
function pickBy(
  set: CandidateSet,
  key: (c: CandidateTraits) => number,
  random: () => number,
): number {
  const best: number[] = [];
  let bestKey = Infinity;
  for (let k = 0; k < set.size; k++) {
    const v = key(set.traits(k));
    if (v < bestKey - 1e-9) {
      best.length = 0;
      best.push(k);
      bestKey = v;
    } else if (Math.abs(v - bestKey) <= 1e-9) {
      best.push(k);
    }
  }
  let kept = best;
  if (best.length > 1) {
    let fewest = Infinity;
    for (const k of best) fewest = Math.min(fewest, set.bound(k));
    kept = best.filter((k) => set.bound(k) === fewest);
  }
  return kept[Math.floor(random() * kept.length)] ?? 0;
}

/** The least loaded node, affinity counted as less load. */
export function spreadStrategy(
  affinityWeight = DEFAULT_AFFINITY_WEIGHT,
  random: () => number = Math.random,
): PlacementStrategy {
  return positional('spread', (set) =>
    pickBy(set, (c) => c.load - credit(c, affinityWeight), random),
  );
}

/** The most loaded node that fits, affinity counted as more load. */
export function packStrategy(
  affinityWeight = DEFAULT_AFFINITY_WEIGHT,
  random: () => number = Math.random,
): PlacementStrategy {
  return positional('pack', (set) =>
    pickBy(set, (c) => -(c.load + credit(c, affinityWeight)), random),
  );
}

/** Candidates in id order, one after the other (per scheduler instance). */
export function roundRobinStrategy(): PlacementStrategy {
  let last: string | undefined;
  return positional('round-robin', (set) => {
    // The next id after the last one chosen, wrapping around: O(n), no sort.
    let next = -1;
    let first = 0;
    for (let k = 0; k < set.size; k++) {
      const id = set.id(k);
      if (id < set.id(first)) first = k;
      if (last !== undefined && id > last && (next < 0 || id < set.id(next))) next = k;
    }
    const chosen = next < 0 ? first : next;
    last = set.id(chosen);
    return chosen;
  });
}

/** Any candidate. */
export function randomStrategy(random: () => number = Math.random): PlacementStrategy {
  return positional('random', (set) => Math.floor(random() * set.size));
}

/**
 * A built-in strategy by name.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` for an unknown name.
 */
export function createStrategy(
  name: string,
  options: { affinityWeight?: number; random?: () => number } = {},
): PlacementStrategy {
  switch (name) {
    case 'spread':
      return spreadStrategy(options.affinityWeight, options.random);
    case 'pack':
      return packStrategy(options.affinityWeight, options.random);
    case 'round-robin':
      return roundRobinStrategy();
    case 'random':
      return randomStrategy(options.random);
    default:
      throw new AenvError(
        'CONFIG_INVALID_VALUE',
        `unknown placement strategy '${name}' (${STRATEGY_NAMES.join(', ')})`,
        { fields: { key: 'scheduler.strategy' } },
      );
  }
}
