/**
 * Tests of the per-VM jailer options and their `--cgroup` limits, and of
 * the jailer command line they make.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jailerCgroups, jailerForVm } from './jailer-per-vm.js';
import { jailerArgs } from './vmm-layout.js';

const BASE = { binary: '/usr/bin/jailer', uid: 65534, gid: 65534, chrootBaseDir: '/srv/jailer' };
const ID = { uid: 200007, gid: 200007, groups: [200000] };
const LIMITS = { cgroupVersion: 2 as const, memoryOverheadMiB: 64, cpuLimit: true, pidsMax: 128 };

describe('jailerForVm', () => {
  it('gives the VM its own uid/gid and v2 limits under the aenv parent', () => {
    const j = jailerForVm(BASE, ID, { vcpus: 2, memoryMiB: 512 }, LIMITS);
    const args = jailerArgs(j, '/usr/bin/firecracker', 'vm-1', '/run/netns/slot-1');
    const at = (flag: string): string[] =>
      args.flatMap((a, i) => (a === flag ? [args[i + 1] as string] : []));
    assert.deepEqual(at('--uid'), ['200007']);
    assert.deepEqual(at('--gid'), ['200007']);
    assert.deepEqual(at('--cgroup-version'), ['2']);
    assert.deepEqual(at('--cgroup'), [
      `memory.max=${576 * 2 ** 20}`,
      'pids.max=128',
      'cpu.max=200000 100000',
    ]);
    assert.deepEqual(at('--parent-cgroup'), ['aenv']);
    assert.deepEqual(at('--netns'), ['/run/netns/slot-1']);
  });

  it('writes the v1 file names, and no CPU limit when it is off', () => {
    assert.deepEqual(jailerCgroups({ vcpus: 1, memoryMiB: 256 }, { ...LIMITS, cgroupVersion: 1 }), [
      `memory.limit_in_bytes=${320 * 2 ** 20}`,
      'pids.max=128',
      'cpu.cfs_period_us=100000',
      'cpu.cfs_quota_us=100000',
    ]);
    assert.deepEqual(jailerCgroups({ vcpus: 1, memoryMiB: 256 }, { ...LIMITS, cpuLimit: false }), [
      `memory.max=${320 * 2 ** 20}`,
      'pids.max=128',
    ]);
  });

  it('keeps the configured options when there are no limits', () => {
    const j = jailerForVm(BASE, ID, { vcpus: 1, memoryMiB: 128 }, undefined);
    assert.deepEqual(j, { ...BASE, uid: 200007, gid: 200007 });
  });
});
