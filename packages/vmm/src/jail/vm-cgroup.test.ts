/**
 * Tests of the VMM cgroup paths and limits (pure plan), controller
 * detection on stand-in cgroup trees (plain directories shaped like
 * /sys/fs/cgroup), and creation of the groups in such a tree.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createVmCgroup, detectCgroups, removeStaleVmCgroups, vmCgroupPlan } from './vm-cgroup.js';

const LIMITS = { memoryBytes: 512 * 2 ** 20, cpu: { vcpus: 2, periodUs: 100_000 }, pidsMax: 512 };

describe('vmCgroupPlan', () => {
  it('puts a v2 VMM in one group with memory.max, cpu.max and pids.max', () => {
    const plan = vmCgroupPlan({ version: 2, root: '/cg' }, 'vm1', LIMITS);
    assert.deepEqual(plan.dirs, ['/cg/aenv', '/cg/aenv/vm1']);
    assert.deepEqual(plan.writes, [
      ['/cg/cgroup.subtree_control', '+cpu +memory +pids'],
      ['/cg/aenv/cgroup.subtree_control', '+cpu +memory +pids'],
      ['/cg/aenv/vm1/memory.max', String(512 * 2 ** 20)],
      ['/cg/aenv/vm1/pids.max', '512'],
      ['/cg/aenv/vm1/cpu.max', '200000 100000'],
    ]);
    assert.deepEqual(plan.procs, ['/cg/aenv/vm1/cgroup.procs']);
    assert.deepEqual(plan.leaves, ['/cg/aenv/vm1']);
  });

  it('uses the cpu, memory and pids hierarchies under v1', () => {
    const plan = vmCgroupPlan({ version: 1, root: '/cg' }, 'vm1', { ...LIMITS, cpu: undefined });
    assert.deepEqual(plan.leaves, ['/cg/cpu/aenv/vm1', '/cg/memory/aenv/vm1', '/cg/pids/aenv/vm1']);
    assert.deepEqual(plan.writes, [
      ['/cg/memory/aenv/vm1/memory.limit_in_bytes', String(512 * 2 ** 20)],
      ['/cg/pids/aenv/vm1/pids.max', '512'],
    ]);
    const withCpu = vmCgroupPlan({ version: 1, root: '/cg' }, 'vm1', LIMITS);
    assert.deepEqual(withCpu.writes.slice(2), [
      ['/cg/cpu/aenv/vm1/cpu.cfs_period_us', '100000'],
      ['/cg/cpu/aenv/vm1/cpu.cfs_quota_us', '200000'],
    ]);
    assert.equal(withCpu.procs.length, 3);
  });

  it('refuses names that would leave the parent group', () => {
    for (const bad of ['..', '../x', 'a/b', '']) {
      assert.throws(() => vmCgroupPlan({ version: 2, root: '/cg' }, bad, LIMITS), {
        code: 'INVALID_ARGUMENT',
      });
    }
  });
});

describe('detectCgroups and createVmCgroup on stand-in trees', async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-cgroup-'));
  after(() => rm(work, { recursive: true, force: true }));

  it('prefers v2 when it lists cpu and memory, else finds v1, else nothing', async () => {
    const v2 = join(work, 'v2');
    await mkdir(v2);
    await writeFile(join(v2, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    assert.deepEqual(await detectCgroups(v2), { version: 2, root: v2 });
    const v1 = join(work, 'v1');
    await mkdir(join(v1, 'unified'), { recursive: true });
    await writeFile(join(v1, 'cgroup.controllers'), '\n');
    for (const c of ['cpu', 'memory', 'pids']) {
      await mkdir(join(v1, c));
      await writeFile(join(v1, c, 'cgroup.procs'), '');
    }
    assert.deepEqual(await detectCgroups(v1), { version: 1, root: v1 });
    assert.equal(await detectCgroups(join(work, 'none')), undefined);
  });

  it('creates the groups and writes the limits', async () => {
    const root = join(work, 'create');
    await mkdir(root);
    const plan = vmCgroupPlan({ version: 1, root }, 'vm2', LIMITS);
    await createVmCgroup(plan);
    const limit = await readFile(join(root, 'memory/aenv/vm2/memory.limit_in_bytes'), 'utf8');
    assert.equal(limit, String(512 * 2 ** 20));
    assert.equal(await readFile(join(root, 'cpu/aenv/vm2/cpu.cfs_quota_us'), 'utf8'), '200000');
  });
});

describe("removeStaleVmCgroups on this host's cgroups", async () => {
  const host = process.getuid?.() === 0 ? await detectCgroups() : undefined;
  const skip = host === undefined ? 'needs root and cgroup controllers' : false;
  const parentName = `aenv-test-${process.pid}`;
  const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
  after(async () => {
    sleeper.kill('SIGKILL');
    await new Promise((r) => (sleeper.exitCode === null ? sleeper.once('close', r) : r(null)));
    if (host === undefined) return;
    const plan = vmCgroupPlan(host, 'x', { memoryBytes: 1 << 30, pidsMax: 64 });
    const parents = plan.leaves.map((l) => join(l, '..', '..', parentName));
    for (const dir of parents) {
      for (const leaf of ['empty', 'busy']) await rmdir(join(dir, leaf)).catch(() => undefined);
      await rmdir(dir).catch(() => undefined);
    }
  });

  it('removes empty groups and keeps groups with processes', { skip }, async () => {
    const h = host as NonNullable<typeof host>;
    const leafDir = (leaf: string): string[] =>
      h.version === 2
        ? [join(h.root, parentName, leaf)]
        : ['cpu', 'memory', 'pids'].map((c) => join(h.root, c, parentName, leaf));
    for (const leaf of ['empty', 'busy'])
      for (const d of leafDir(leaf)) await mkdir(d, { recursive: true });
    for (const d of leafDir('busy')) await writeFile(join(d, 'cgroup.procs'), String(sleeper.pid));
    assert.equal(await removeStaleVmCgroups(h, 60_000, parentName), 0, 'too young to be stale');
    const removed = await removeStaleVmCgroups(h, 0, parentName);
    assert.equal(removed, leafDir('empty').length);
    for (const d of leafDir('busy')) assert.ok((await stat(d)).isDirectory());
    for (const d of leafDir('empty')) await assert.rejects(stat(d), { code: 'ENOENT' });
  });
});
