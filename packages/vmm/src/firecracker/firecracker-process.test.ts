import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firecrackerCommand, netnsPath } from './firecracker-process.js';
import { directLayout } from './vmm-layout.js';

describe('firecrackerCommand', () => {
  const layout = directLayout('/run/vm');

  it('runs firecracker directly, in a namespace, tied to its parent', () => {
    assert.deepEqual(
      firecrackerCommand({ firecracker: 'firecracker', id: 'sbx1', layout, killWithParent: false }),
      ['firecracker', ['--api-sock', '/run/vm/firecracker.sock', '--id', 'sbx1']],
    );
    const [prog, args] = firecrackerCommand({
      firecracker: '/bin/fc',
      id: 'a_b',
      layout,
      netns: 'slot-1',
      killWithParent: true,
    });
    assert.equal(prog, 'setpriv');
    assert.deepEqual(args, [
      '--pdeathsig',
      'SIGKILL',
      '--',
      'nsenter',
      '--net=/run/netns/slot-1',
      '--',
      '/bin/fc',
      '--api-sock',
      '/run/vm/firecracker.sock',
      '--id',
      'a-b',
    ]);
    assert.equal(netnsPath('/proc/42/ns/net'), '/proc/42/ns/net');
  });

  it('runs the jailer, which joins the namespace itself', () => {
    const jailer = { binary: '/bin/jailer', uid: 1, gid: 2, chrootBaseDir: '/srv/j' };
    const jailLayout = {
      ...layout,
      kind: 'jail' as const,
      apiSocket: {
        host: '/srv/j/firecracker/x/root/run/firecracker.socket',
        vmm: '/run/firecracker.socket',
      },
    };
    const [prog, args] = firecrackerCommand({
      firecracker: '/bin/firecracker',
      id: 'x',
      layout: jailLayout,
      netns: 'slot-2',
      jailer,
      killWithParent: false,
    });
    assert.equal(prog, '/bin/jailer');
    assert.deepEqual(args, [
      '--id',
      'x',
      '--exec-file',
      '/bin/firecracker',
      '--uid',
      '1',
      '--gid',
      '2',
      '--chroot-base-dir',
      '/srv/j',
      '--netns',
      '/run/netns/slot-2',
      '--',
      '--api-sock',
      '/run/firecracker.socket',
    ]);
  });
});
