/**
 * The node's own per-stage latency metrics, read from its `GET /metrics`
 * (histogram `aenv_sandbox_operation_seconds{op, stage}`): count and mean
 * per operation and stage. `docs/performance.md` explains what dominates
 * each latency from these, not from the benchmark's outside view.
 *
 * @module
 */

const LINE = /^aenv_sandbox_operation_seconds_(sum|count)\{([^}]*)\}\s+(\S+)$/;

function labels(text) {
  const out = {};
  for (const m of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) out[m[1]] = m[2];
  return out;
}

/**
 * Parses the Prometheus text of a node into
 * `{ [op]: { [stage]: { count, meanMs } } }`.
 * @param {string} text
 * @returns {Record<string, Record<string, { count: number, meanMs: number }>>}
 */
export function parseStageMetrics(text) {
  const acc = {};
  for (const line of text.split('\n')) {
    const m = LINE.exec(line.trim());
    if (m === null) continue;
    const { op, stage } = labels(m[2]);
    if (op === undefined || stage === undefined) continue;
    acc[op] ??= {};
    acc[op][stage] ??= { count: 0, sum: 0 };
    acc[op][stage][m[1]] = Number(m[3]);
  }
  const out = {};
  for (const [op, stages] of Object.entries(acc)) {
    out[op] = {};
    for (const [stage, { count, sum }] of Object.entries(stages)) {
      out[op][stage] = { count, meanMs: count > 0 ? (sum / count) * 1000 : NaN };
    }
  }
  return out;
}

/**
 * The difference of two parsed snapshots (`after` minus `before`), so one
 * phase of a benchmark reads only its own operations.
 */
export function stageMetricsDelta(before, after) {
  const out = {};
  for (const [op, stages] of Object.entries(after)) {
    for (const [stage, a] of Object.entries(stages)) {
      const b = before[op]?.[stage] ?? { count: 0, meanMs: 0 };
      const count = a.count - b.count;
      if (count <= 0) continue;
      const sumMs = a.meanMs * a.count - (b.count > 0 ? b.meanMs * b.count : 0);
      out[op] ??= {};
      out[op][stage] = { count, meanMs: sumMs / count };
    }
  }
  return out;
}
