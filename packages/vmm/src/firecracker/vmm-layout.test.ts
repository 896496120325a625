import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  directLayout,
  fdDrivePath,
  jailDrivePath,
  jailId,
  jailerArgs,
  splitDev,
} from './vmm-layout.js';

describe('vmm layout', () => {
  it('direct: files in the run directory, drives as inherited fds', () => {
    const l = directLayout('/run/aenv/vm1');
    assert.equal(l.kind, 'direct');
    assert.deepEqual(l.apiSocket, {
      host: '/run/aenv/vm1/firecracker.sock',
      vmm: '/run/aenv/vm1/firecracker.sock',
    });
    assert.equal(l.metricsFifo.vmm, '/run/aenv/vm1/metrics.fifo');
    assert.equal(l.jail, null);
    assert.deepEqual([fdDrivePath(0), fdDrivePath(2)], ['/proc/self/fd/3', '/proc/self/fd/5']);
    assert.equal(jailDrivePath('rootfs'), '/drives/rootfs');
  });

  it('builds the jailer command line', () => {
    const args = jailerArgs(
      {
        binary: '/usr/bin/jailer',
        uid: 123,
        gid: 100,
        cgroupVersion: 2,
        cgroups: ['memory.max=1073741824', 'cpu.max=50000'],
        parentCgroup: 'aenv',
        resourceLimits: ['no-file=2048'],
      },
      '/usr/bin/firecracker',
      'sbx_1.a',
      '/run/netns/slot-3',
    );
    assert.deepEqual(args, [
      '--id',
      'sbx-1-a',
      '--exec-file',
      '/usr/bin/firecracker',
      '--uid',
      '123',
      '--gid',
      '100',
      '--chroot-base-dir',
      '/srv/jailer',
      '--netns',
      '/run/netns/slot-3',
      '--cgroup-version',
      '2',
      '--cgroup',
      'memory.max=1073741824',
      '--cgroup',
      'cpu.max=50000',
      '--parent-cgroup',
      'aenv',
      '--resource-limit',
      'no-file=2048',
    ]);
    assert.equal(jailId('x'.repeat(80)).length, 64);
  });

  it('splits device numbers the glibc way', () => {
    assert.deepEqual(splitDev(BigInt((43 << 8) | 5)), [43, 5]);
    // major 259, minor 300: major bits 8..19, minor low 8 bits and bits 20..
    const rdev = (259n << 8n) | (300n & 0xffn) | ((300n & ~0xffn) << 12n);
    assert.deepEqual(splitDev(rdev), [259, 300]);
  });
});
