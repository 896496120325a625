import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineageForest, lineageTreeOf, type LineageNode } from './lineage.js';
import { filterSandboxes, NO_FILTER } from './sandbox-filter.js';
import type { UiSandbox, UiSnapshot } from './ui-types.js';

function sbx(id: string, extra: Partial<UiSandbox> = {}): UiSandbox {
  return {
    sandboxID: id,
    templateID: 'base',
    state: 'running',
    startedAt: '2026-01-01T00:00:00Z',
    endAt: '2026-01-01T01:00:00Z',
    cpuCount: 1,
    memoryMB: 256,
    diskSizeMB: 1024,
    metadata: {},
    ...extra,
  };
}

function shape(n: LineageNode): unknown {
  return { [n.key]: n.children.map(shape) };
}

describe('lineageForest', () => {
  it('hangs forks under their parent and snapshot children under the snapshot', () => {
    const snap: UiSnapshot = {
      snapshotID: 'snap1',
      names: ['golden'],
      sandboxID: 'a',
      templateID: 'base',
      createdAt: '2026-01-01T00:00:00Z',
      lineage: ['snap1'],
    };
    const forest = lineageForest(
      [sbx('a'), sbx('b', { parentSandboxID: 'a' }), sbx('c', { lineage: ['t0', 'snap1'] })],
      [snap],
    );
    assert.deepEqual(forest.map(shape), [
      {
        'template:base': [
          { 'sandbox:a': [{ 'sandbox:b': [] }, { 'snapshot:snap1': [{ 'sandbox:c': [] }] }] },
        ],
      },
    ]);
    assert.equal(lineageTreeOf(forest, 'sandbox:b')?.key, 'template:base');
    assert.equal(lineageTreeOf(forest, 'sandbox:zzz'), undefined);
  });

  it('keeps a killed parent as a missing node so the tree stays connected', () => {
    const forest = lineageForest([sbx('child', { parentSandboxID: 'gone' })], []);
    assert.deepEqual(forest.map(shape), [
      { 'template:base': [{ 'sandbox:gone': [{ 'sandbox:child': [] }] }] },
    ]);
    const gone = forest[0]?.children[0];
    assert.equal(gone?.kind, 'missing');
  });
});

describe('filterSandboxes', () => {
  const list = [
    sbx('a1', { metadata: { team: 'x', env: 'dev' } }),
    sbx('b2', { state: 'paused', templateID: 'py', alias: 'python' }),
  ];
  it('filters by state, template or alias, metadata pairs and id text', () => {
    assert.equal(filterSandboxes(list, NO_FILTER).length, 2);
    assert.deepEqual(
      filterSandboxes(list, { ...NO_FILTER, state: 'paused' }).map((s) => s.sandboxID),
      ['b2'],
    );
    assert.equal(filterSandboxes(list, { ...NO_FILTER, template: 'python' }).length, 1);
    assert.equal(filterSandboxes(list, { ...NO_FILTER, metadata: 'team=x, env' }).length, 1);
    assert.equal(filterSandboxes(list, { ...NO_FILTER, metadata: 'team=y' }).length, 0);
    assert.deepEqual(
      filterSandboxes(list, { ...NO_FILTER, text: 'B' }).map((s) => s.sandboxID),
      ['b2'],
    );
  });
});
