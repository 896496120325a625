import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { VmSpec } from './driver.js';
import { validateRestoreSpec, validateVmSpec } from './vm-spec.js';

const good: VmSpec = {
  id: 'sbx1',
  vcpus: 1,
  memoryMiB: 256,
  kernel: '/a/vmlinux',
  initrd: '/a/initrd',
  drives: [
    {
      id: 'rootfs',
      source: { kind: 'nbd', socket: '/run/x.sock', export: 'sbx1' },
      readOnly: false,
    },
    {
      id: 'tools',
      source: { kind: 'file', path: '/a/tools.erofs', format: 'raw' },
      readOnly: true,
    },
  ],
  network: { netns: 'aenv-3', tap: 'tap0', mac: '02:00:00:00:00:02' },
  runDir: '/run/aenv/sbx1',
};

function rejects(patch: Partial<VmSpec> | Record<string, unknown>, field: RegExp): void {
  assert.throws(
    () => validateVmSpec({ ...good, ...patch }),
    (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT' && field.test(e.message),
    JSON.stringify(patch),
  );
}

describe('validateVmSpec', () => {
  it('accepts a well-formed spec', () => {
    assert.doesNotThrow(() => validateVmSpec(good));
    assert.doesNotThrow(() => validateRestoreSpec({ id: 'c1', drives: good.drives, runDir: '/r' }));
  });

  it('names the bad field', () => {
    rejects({ id: 'has space' }, /\bid\b/);
    rejects({ vcpus: 0 }, /vcpus/);
    rejects({ memoryMiB: 1.5 }, /memoryMiB/);
    rejects({ kernel: 'relative/vmlinux' }, /kernel/);
    rejects({ runDir: `/${'d'.repeat(100)}` }, /runDir .*unix sockets/);
    rejects({ drives: [good.drives[1], good.drives[1]] }, /used twice/);
    rejects({ drives: [{ ...good.drives[1], id: 'Tools' }] }, /drives\[0\]\.id/);
    rejects(
      {
        drives: [{ id: 'x', source: { kind: 'file', path: '/x', format: 'vmdk' }, readOnly: true }],
      },
      /format/,
    );
    rejects({ network: { tap: 'tap0', mac: '02:00:00:00:00' } }, /network\.mac/);
    rejects(
      { network: { tap: 'a-very-long-interface-name', mac: '02:00:00:00:00:02' } },
      /network\.tap/,
    );
    rejects(
      { network: { netns: '../x y', tap: 'tap0', mac: '02:00:00:00:00:02' } },
      /network\.netns/,
    );
    rejects({ serialLogMaxBytes: 10 }, /serialLogMaxBytes/);
  });
});
