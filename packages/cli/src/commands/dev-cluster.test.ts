import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UsageError } from '../cli-error.js';
import { devCommand } from './dev-cluster.js';

const usage = (pattern: RegExp) => (e: unknown) =>
  e instanceof UsageError && pattern.test(e.message);

describe('aenv dev cluster', () => {
  it('rejects bad verbs and options before starting anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aenv-dev-cluster-args-'));
    try {
      const at = join(dir, 'cluster');
      await assert.rejects(devCommand(['pods', 'up']), usage(/unknown dev command 'pods'/));
      await assert.rejects(devCommand(['cluster', 'start']), usage(/up or down/));
      await assert.rejects(
        devCommand(['cluster', 'up', '--dir', at, '--store', 'nfs']),
        usage(/--store: expected 'fs' or 's3'/),
      );
      await assert.rejects(
        devCommand(['cluster', 'up', '--dir', at, '--nodes', '0']),
        usage(/--nodes: 1 to 16/),
      );
      await assert.rejects(
        devCommand(['cluster', 'down', '--dir', at, '--nodes', '3']),
        usage(/nodes/),
      );
      assert.equal(existsSync(at), false, 'nothing was created');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to tear down a directory that records no cluster', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aenv-dev-cluster-down-'));
    try {
      await assert.rejects(
        devCommand(['cluster', 'down', '--dir', dir]),
        /no dev cluster is recorded in/,
      );
      assert.equal(existsSync(dir), true, 'an unrelated directory is not removed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
