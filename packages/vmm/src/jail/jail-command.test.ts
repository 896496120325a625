/**
 * Tests of the jail helper's command line and the mount list.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jailCommand, jailMounts } from './jail-command.js';

const ID = { uid: 200003, gid: 200003, groups: [200000] };

describe('jailMounts', () => {
  it('keeps only binds under hidden directories, parents first', () => {
    const m = jailMounts(
      ['/tmp', '/home', '/tmp'],
      [
        { path: '/tmp/run/vm1/memory', readOnly: false },
        { path: '/tmp/run/vm1', readOnly: false },
        { path: '/usr/lib/kernel', readOnly: true },
        { path: '/home/aenv/kernel', readOnly: true },
        { path: '/tmp/run/vm1/kernel', readOnly: true },
      ],
    );
    assert.deepEqual(m.hide, ['/home', '/tmp']);
    assert.deepEqual(m.binds, [
      { path: '/home/aenv/kernel', readOnly: true },
      { path: '/tmp/run/vm1', readOnly: false },
      { path: '/tmp/run/vm1/kernel', readOnly: true },
    ]);
  });

  it('does not take a sibling with a common prefix for a parent', () => {
    const m = jailMounts(['/var/tmp'], [{ path: '/var/tmpx/a', readOnly: true }]);
    assert.deepEqual(m.binds, []);
  });

  it('refuses relative or unnormalized paths', () => {
    assert.throws(() => jailMounts(['tmp'], []), { code: 'VMM_JAIL_FAILED' });
    assert.throws(() => jailMounts(['/tmp'], [{ path: '/tmp/../etc', readOnly: true }]), {
      code: 'VMM_JAIL_FAILED',
    });
  });
});

describe('jailCommand', () => {
  it('orders namespace, cgroups, tap, mounts, identity, then the program', () => {
    const [prog, args] = jailCommand(
      {
        helper: '/h/aenv-vmm-jail',
        identity: ID,
        netns: 'aenv-slot-3',
        cgroupProcs: ['/cg/aenv/vm/cgroup.procs'],
        hide: ['/tmp'],
        binds: [{ path: '/tmp/vm', readOnly: false }],
        tap: { name: 'tap0', fd: 3 },
        killWithParent: true,
      },
      '/usr/bin/qemu-system-x86_64',
      ['-name', 'x'],
    );
    assert.equal(prog, '/h/aenv-vmm-jail');
    assert.deepEqual(args, [
      '--netns',
      '/run/netns/aenv-slot-3',
      '--cgroup',
      '/cg/aenv/vm/cgroup.procs',
      '--tap',
      'tap0:3',
      '--hide',
      '/tmp',
      '--bind',
      '/tmp/vm',
      '--groups',
      '200000',
      '--gid',
      '200003',
      '--uid',
      '200003',
      '--pdeathsig',
      '--',
      '/usr/bin/qemu-system-x86_64',
      '-name',
      'x',
    ]);
  });

  it('leaves out what is not asked for', () => {
    const [, args] = jailCommand(
      { helper: 'h', identity: ID, cgroupProcs: [], hide: [], binds: [], killWithParent: false },
      'q',
      [],
    );
    assert.deepEqual(args, ['--groups', '200000', '--gid', '200003', '--uid', '200003', '--', 'q']);
  });
});
