/**
 * Tests of the per-prefix lock, with real `flock` and real processes.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { PrefixLock } from './prefix-lock.js';

describe('PrefixLock', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-lock-test-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is exclusive per prefix and released by release()', async () => {
    const a = await PrefixLock.acquire(dir, 'p1');
    const other = await PrefixLock.acquire(dir, 'p2');
    await assert.rejects(PrefixLock.acquire(dir, 'p1', 1000), (err: unknown) => {
      return err instanceof AenvError && err.code === 'NET_PREFIX_IN_USE';
    });
    a.release();
    a.release();
    assert.equal(a.fd, undefined);
    const b = await PrefixLock.acquire(dir, 'p1', 1000);
    b.release();
    other.release();
  });

  it('stays held while a process that inherited it runs, after the holder let go', async () => {
    const a = await PrefixLock.acquire(dir, 'p3');
    const child = spawn('sleep', ['1.5'], {
      stdio: ['ignore', 'ignore', 'ignore', a.fd],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    a.release();
    const t0 = Date.now();
    const b = await PrefixLock.acquire(dir, 'p3', 10_000);
    assert.ok(
      Date.now() - t0 >= 1000,
      `acquired after ${Date.now() - t0} ms, before the child exited`,
    );
    await exited;
    b.release();
  });
});
